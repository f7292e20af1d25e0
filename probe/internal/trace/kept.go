package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/internal/keep"
)

// Asking the ICD loader whether it loads layers loads the OpenCL runtime in a child: about 50 ms on PoCL and
// 150 ms on an H100, before every traced program (docs/performance.md#what-a-trace-costs-to-start). A yes
// is a property of the loader's file: it is kept in the layer's cache folder and taken again while that file,
// its folder and what answerKey lists of what decides which file the dynamic linker loads are unchanged.
// Any other answer (no platform, a crash, a loader without layers) is asked again each time: it can change
// with the runtimes.

// answersFile holds the kept answers in the layer's cache folder, newest first, at most keptAnswers of them
// (one per environment the user traces in).
const (
	answersFile = "loader-answers.json"
	keptAnswers = 8
)

// keptAnswer is one kept answer and what it holds for.
type keptAnswer struct {
	Key    string       `json:"key"`  // answerKey: the layer and what chooses the loader
	File   string       `json:"file"` // loaderIdentity of Answer.File
	Answer LoaderAnswer `json:"answer"`
}

// chooserVariables are the environment variables that decide which loader a program loads, which layers
// and runtimes it loads, or how.
var chooserVariables = []string{"LD_LIBRARY_PATH", "LD_PRELOAD", "OPENCL_LAYERS", "OCL_ICD_VENDORS", "OCL_ICD_FILENAMES", "OPENCL_VENDOR_PATH"}

// answerKey is what an answer holds for besides the loader's file: the layer, those variables, the dynamic
// linker's cache and its preload list, and the folders of LD_LIBRARY_PATH, each made absolute (an empty
// entry is the current folder): a loader put into one of them changes the folder. The loader's own folder
// is checked with its file (KeptAnswer): a link in it pointed elsewhere changes the folder too. What is not
// covered: a link changed in a folder the dynamic linker's cache names, without ldconfig run after it.
func answerKey(layer string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", layer)
	for _, k := range chooserVariables {
		fmt.Fprintf(h, "%s=%s\x00", k, os.Getenv(k))
	}
	fmt.Fprintf(h, "%s\x00%s\x00", keep.Identity("/etc/ld.so.cache"), keep.Identity("/etc/ld.so.preload"))
	for _, d := range strings.Split(os.Getenv("LD_LIBRARY_PATH"), ":") {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		fmt.Fprintf(h, "%s:%s\x00", d, keep.Identity(d))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// loaderIdentity is the loader's file and its folder, as KeptAnswer compares them ("" where either cannot
// be read).
func loaderIdentity(file string) string {
	f, d := keep.Identity(file), keep.Identity(filepath.Dir(file))
	if f == "" || d == "" {
		return ""
	}
	return f + " " + d
}

// KeptAnswer is the answer kept in dir for this layer and environment, where the loader's file is the one it
// was kept for.
func KeptAnswer(dir, layer string) (LoaderAnswer, bool) {
	key := answerKey(layer)
	for _, k := range readAnswers(dir) {
		if k.Key == key && k.File != "" && k.File == loaderIdentity(k.Answer.File) {
			a := k.Answer
			a.Kept = true
			return a, true
		}
	}
	return LoaderAnswer{}, false
}

// KeepAnswer keeps a in dir where it says the loader loaded the layer and the child named the loader's file.
// A failure to write is not an error: the next trace asks again.
func KeepAnswer(dir, layer string, a LoaderAnswer) {
	if a.Inits == 0 || a.File == "" || a.Kept {
		return
	}
	k := keptAnswer{Key: answerKey(layer), File: loaderIdentity(a.File), Answer: a}
	if k.File == "" {
		return
	}
	kept := []keptAnswer{k}
	for _, old := range readAnswers(dir) {
		if old.Key != k.Key && len(kept) < keptAnswers {
			kept = append(kept, old)
		}
	}
	keep.Write(dir, answersFile, kept)
}

// readAnswers reads the kept answers.
func readAnswers(dir string) []keptAnswer {
	var kept []keptAnswer
	if !keep.Read(dir, answersFile, &kept) {
		return nil
	}
	return kept
}
