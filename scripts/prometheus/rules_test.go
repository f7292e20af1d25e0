// Package prometheus tests clmemprobe.rules.yml, the Prometheus rules for the metrics clmemprobe writes:
// with Prometheus's own promtool (Debian's prometheus package; scripts/setup.sh --tests installs it), with
// each alert broken on purpose to show that its tests notice, and against an exposition rendered by package
// report, so that the rules cannot name a metric or a label the tool does not write.
package prometheus

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report"
	"github.com/clmemprobe/clmemprobe/report/findings"
	"github.com/clmemprobe/clmemprobe/report/promcheck"
)

const (
	rulesFile = "clmemprobe.rules.yml"
	testsFile = "clmemprobe.rules.test.yml"
	// requireEnv turns a skip for a missing tool into a failure; scripts/test.sh sets it. The helpers that
	// read it elsewhere live in other packages' test files, which cannot be imported.
	requireEnv = "CLMEMPROBE_REQUIRE_OPENCL"
)

// promtool returns promtool's path, or skips the test where it is missing (fails it under requireEnv=1).
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err == nil {
		return p
	}
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("promtool is not on PATH (required by %s=1): install Debian's prometheus package (scripts/setup.sh --tests does)", requireEnv)
	}
	t.Skip("promtool is not on PATH: install Debian's prometheus package (scripts/setup.sh --tests does) to test the Prometheus rules")
	return ""
}

// run runs promtool in dir and returns its output and whether it exited 0.
func run(t *testing.T, tool, dir string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(tool, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("promtool %s: %v", strings.Join(args, " "), err)
	}
	return string(out), err == nil
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var rulesFound = regexp.MustCompile(`SUCCESS: (\d+) rules found`)

func TestPromtoolChecksAndTestsTheRules(t *testing.T) {
	tool := promtool(t)
	out, ok := run(t, tool, ".", "check", "rules", rulesFile)
	if !ok {
		t.Fatalf("promtool check rules %s:\n%s", rulesFile, out)
	}
	// The other tests read the rules with a small parser of this file's layout; promtool's count holds it
	// to every rule there is.
	m := rulesFound.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("promtool check rules did not say how many rules it found:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); n != len(parseRules(t, readFile(t, rulesFile))) {
		t.Errorf("promtool found %d rules, the parser of this test %d: keep one `- record:` or `- alert:` per rule with its `expr:` below", n, len(parseRules(t, readFile(t, rulesFile))))
	}
	if out, ok := run(t, tool, ".", "test", "rules", testsFile); !ok {
		t.Fatalf("promtool test rules %s:\n%s", testsFile, out)
	}
}

// mutations break one alert each (and the tolerance they share) so that it fires where it must not or no
// longer where it must; promtool test rules must then fail on that alert. Each old text occurs once.
var mutations = []struct {
	alert, name, old, new string
}{
	{"ClmemprobeThresholdBelowGroupMedian", "comparison inverted",
		"< on (name, devices, driver_version, touch, strategy, size_bytes, flags, variant) group_left ()",
		"> on (name, devices, driver_version, touch, strategy, size_bytes, flags, variant) group_left ()"},
	{"ClmemprobeThresholdBelowGroupMedian", "completed jobs not left out",
		`(clmemprobe_outcome{outcome="completed"} == 1)`, `(clmemprobe_outcome{outcome="completed"} == 2)`},
	{"ClmemprobeThresholdBelowGroupMedian", "tolerance 50%", "expr: vector(0.1)", "expr: vector(0.5)"},
	{"ClmemprobeJobCrashedOrHung", "hung misspelt", `outcome=~"crashed|hung"`, `outcome=~"crashed|hang"`},
	{"ClmemprobeMetricsStale", "100 days instead of one", "> 86400", "> 8640000"},
	{"ClmemprobeDriverRegression", "comparison inverted",
		"< on (name, devices, touch, previous_driver_version, strategy, size_bytes, flags, variant) group_left ()",
		"> on (name, devices, touch, previous_driver_version, strategy, size_bytes, flags, variant) group_left ()"},
	{"ClmemprobeDriverRegression", "old driver's median forgotten after an hour",
		"clmemprobe:allocations_ok:median[7d]", "clmemprobe:allocations_ok:median[1h]"},
}

func TestEveryAlertsTestsFailWhenItIsBroken(t *testing.T) {
	tool := promtool(t)
	rules, tests := readFile(t, rulesFile), readFile(t, testsFile)
	broken := map[string]bool{}
	for _, m := range mutations {
		broken[m.alert] = true
	}
	for _, r := range parseRules(t, rules) {
		if r.kind == "alert" && !broken[r.name] {
			t.Errorf("%s is broken by no mutation here: add one that its tests must catch", r.name)
		}
	}
	for _, m := range mutations {
		t.Run(m.alert+"/"+m.name, func(t *testing.T) {
			t.Parallel()
			if n := strings.Count(rules, m.old); n != 1 {
				t.Fatalf("%q occurs %d times in %s, want once: update the mutation", m.old, n, rulesFile)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, rulesFile), []byte(strings.Replace(rules, m.old, m.new, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, testsFile), []byte(tests), 0o644); err != nil {
				t.Fatal(err)
			}
			// Still valid rules: what fails below is the behaviour, not the syntax.
			if out, ok := run(t, tool, dir, "check", "rules", rulesFile); !ok {
				t.Fatalf("the mutant does not load:\n%s", out)
			}
			out, ok := run(t, tool, dir, "test", "rules", testsFile)
			if ok {
				t.Fatalf("promtool test rules passes with %s broken (%s): its tests miss that", m.alert, m.name)
			}
			if !strings.Contains(out, "alertname: "+m.alert+",") {
				t.Errorf("promtool test rules fails, but not on %s:\n%s", m.alert, out)
			}
		})
	}
}

// rule is one rule of the rules file: its kind (record or alert), name and expression.
type rule struct{ kind, name, expr string }

var ruleStart = regexp.MustCompile(`^\s*- (record|alert): (\S+)\s*$`)

// parseRules reads the rules from this folder's file layout: `- record: NAME` or `- alert: NAME`, then
// `expr: EXPR` or `expr: |` with the expression on the lines indented below it.
func parseRules(t *testing.T, text string) []rule {
	t.Helper()
	var rules []rule
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if m := ruleStart.FindStringSubmatch(lines[i]); m != nil {
			rules = append(rules, rule{kind: m[1], name: m[2]})
			continue
		}
		trimmed := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(trimmed, "expr:") || len(rules) == 0 {
			continue
		}
		r := &rules[len(rules)-1]
		if r.expr != "" {
			t.Fatalf("line %d: a second expr for %s", i+1, r.name)
		}
		if v := strings.TrimSpace(strings.TrimPrefix(trimmed, "expr:")); v != "|" {
			r.expr = v
			continue
		}
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		var block []string
		for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " ")) > indent) {
			i++
			block = append(block, lines[i])
		}
		r.expr = strings.TrimSpace(strings.Join(block, "\n"))
	}
	for _, r := range rules {
		if r.expr == "" {
			t.Fatalf("%s %s: no expression found", r.kind, r.name)
		}
	}
	return rules
}

// exposition is what the tool writes, from real runs: for each metric, its label names and every value
// each label took.
type exposition map[string]map[string]map[string]bool

// renderExposition renders the Prometheus metrics of every result kept in the repository (the test fixture
// and the runs of docs/examples) with package report, as `clmemprobe report --format prom` does.
func renderExposition(t *testing.T) exposition {
	t.Helper()
	paths := []string{filepath.Join("..", "..", "probe", "result", "testdata", "run-v1.json")}
	for _, pattern := range []string{"*/run.json", "*/*/run.json"} {
		more, _ := filepath.Glob(filepath.Join("..", "..", "docs", "examples", pattern))
		paths = append(paths, more...)
	}
	exp := exposition{}
	for _, p := range paths {
		r, err := result.Load(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var b bytes.Buffer
		if err := report.Render(&b, "prom", findings.Judge(r)); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		fams, problems, err := promcheck.Parse(b.Bytes())
		if err != nil || len(problems) > 0 {
			t.Fatalf("%s: %v %v", p, err, problems)
		}
		for name, f := range fams {
			if exp[name] == nil {
				exp[name] = map[string]map[string]bool{}
			}
			for _, m := range f.Metric {
				for _, l := range m.Label {
					if exp[name][l.GetName()] == nil {
						exp[name][l.GetName()] = map[string]bool{}
					}
					exp[name][l.GetName()][l.GetValue()] = true
				}
			}
		}
	}
	// Where these runs could not fit costs, the cost families are missing; the rules read host cost.
	for _, name := range []string{"clmemprobe_allocations_ok", "clmemprobe_host_bytes_per_buffer", "clmemprobe_outcome",
		"clmemprobe_device_info", "clmemprobe_info", "clmemprobe_run_end_timestamp_seconds"} {
		if exp[name] == nil {
			t.Fatalf("no run here renders %s: the check below would prove nothing", name)
		}
	}
	return exp
}

// The labels a node's series have beside the tool's: Prometheus adds them at the scrape.
var scrapeLabels = []string{"instance", "job"}

// futureLabels are named by the rules before the tool writes them: none now (`flags` was, until run
// --flags put it on every job series).
var futureLabels = []string{}

var (
	metricName = regexp.MustCompile(`\bclmemprobe[_:][a-zA-Z0-9_:]*`)
	grouping   = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^()]*)\)`)
	selector   = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)?\{([^{}]*)\}`)
	matcher    = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|%q)`)
	countLabel = regexp.MustCompile(`\bcount_values\b[^"]*?\(\s*"([a-zA-Z_][a-zA-Z0-9_]*)"`)
	tmplLabel  = regexp.MustCompile(`\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)`)
	enumValues = regexp.MustCompile(`^[a-z|-]+$`)
)

// labelReplaceArgs returns the arguments of each label_replace call in expr, split at its top-level commas.
func labelReplaceArgs(expr string) [][]string {
	var calls [][]string
	for i := strings.Index(expr, "label_replace("); i >= 0; {
		j := i + len("label_replace(")
		depth, inString, start := 1, false, j
		var args []string
		for ; j < len(expr) && depth > 0; j++ {
			switch c := expr[j]; {
			case c == '"' && (j == 0 || expr[j-1] != '\\'):
				inString = !inString
			case inString:
			case c == '(':
				depth++
			case c == ')':
				depth--
				if depth == 0 {
					args = append(args, strings.TrimSpace(expr[start:j]))
				}
			case c == ',' && depth == 1:
				args = append(args, strings.TrimSpace(expr[start:j]))
				start = j + 1
			}
		}
		calls = append(calls, args)
		next := strings.Index(expr[j:], "label_replace(")
		if next < 0 {
			break
		}
		i = j + next
	}
	return calls
}

func TestRulesNameOnlyWhatTheToolWrites(t *testing.T) {
	text := readFile(t, rulesFile)
	v := newVocabulary(t, parseRules(t, text), renderExposition(t))
	// The annotations (and every other line that is not a comment or an expression) can name labels and
	// series too: $labels.X, and the selectors of their queries.
	var rest []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			rest = append(rest, line)
		}
	}
	everything := strings.Join(rest, "\n")
	v.checkNames(t, everything)
	v.checkGroupings(t)
	v.checkSelectors(t, everything)
}

// vocabulary is what the rules may name: the series and labels the tool writes (exp), the labels the
// scrape adds or a later version will, the labels the rules make themselves (count_values' label and
// label_replace's destination), and the series they record.
type vocabulary struct {
	exp      exposition
	known    map[string]bool
	recorded map[string]bool
	exprs    []string
}

func newVocabulary(t *testing.T, rules []rule, exp exposition) *vocabulary {
	t.Helper()
	v := &vocabulary{exp: exp, known: map[string]bool{}, recorded: map[string]bool{}}
	for _, r := range rules {
		v.exprs = append(v.exprs, r.expr)
		if r.kind == "record" {
			v.recorded[r.name] = true
		}
		for _, m := range countLabel.FindAllStringSubmatch(r.expr, -1) {
			v.known[m[1]] = true
		}
		for _, args := range labelReplaceArgs(r.expr) {
			if len(args) != 5 {
				t.Fatalf("%s: label_replace with %d arguments", r.name, len(args))
			}
			v.known[strings.Trim(args[1], `"`)] = true
		}
	}
	for _, labels := range exp {
		for l := range labels {
			v.known[l] = true
		}
	}
	for _, l := range slices.Concat(scrapeLabels, futureLabels) {
		v.known[l] = true
	}
	return v
}

func (v *vocabulary) checkLabel(t *testing.T, where, l string) {
	t.Helper()
	if !v.known[l] {
		t.Errorf("%s: label %q is in no series the tool writes, and no rule makes it", where, l)
	}
}

// checkNames: every series read is one the tool writes or a rule records, and every $labels.X is known.
func (v *vocabulary) checkNames(t *testing.T, everything string) {
	for _, name := range metricName.FindAllString(everything, -1) {
		if strings.Contains(name, ":") {
			if !v.recorded[name] {
				t.Errorf("%s is read but no rule records it", name)
			}
		} else if v.exp[name] == nil {
			t.Errorf("%s is not a metric the tool writes", name)
		}
	}
	for _, m := range tmplLabel.FindAllStringSubmatch(everything, -1) {
		v.checkLabel(t, "annotation", m[1])
	}
}

// checkGroupings: every label grouped or matched on is known, and wherever the job's labels are, flags
// are too (see the rules' header).
func (v *vocabulary) checkGroupings(t *testing.T) {
	for _, expr := range v.exprs {
		for _, m := range grouping.FindAllStringSubmatch(expr, -1) {
			var names []string
			for l := range strings.SplitSeq(m[1], ",") {
				if l = strings.TrimSpace(l); l != "" {
					v.checkLabel(t, m[0], l)
					names = append(names, l)
				}
			}
			if slices.Contains(names, "strategy") && !slices.Contains(names, "flags") {
				t.Errorf("%q groups jobs without flags", m[0])
			}
		}
		for _, args := range labelReplaceArgs(expr) {
			v.checkLabel(t, "label_replace", strings.Trim(args[3], `"`))
		}
	}
}

// checkSelectors: every matcher names a label its series has, and a value from a fixed list is one the
// tool writes (a misspelt one matches nothing and the alert never fires).
func (v *vocabulary) checkSelectors(t *testing.T, everything string) {
	for _, s := range selector.FindAllStringSubmatch(everything, -1) {
		name := s[1]
		for _, m := range matcher.FindAllStringSubmatch(s[2], -1) {
			label, op, value := m[1], m[2], strings.Trim(m[3], `"`)
			v.checkLabel(t, s[0], label)
			labels, raw := v.exp[name]
			if !raw {
				continue // a recorded series: its labels are checked where the rules make them
			}
			if labels[label] == nil && !slices.Contains(scrapeLabels, label) && !slices.Contains(futureLabels, label) {
				t.Errorf("%s: %s has no label %q", s[0], name, label)
				continue
			}
			if (op == "=" || op == "=~") && labels[label] != nil && enumValues.MatchString(value) {
				for val := range strings.SplitSeq(value, "|") {
					if !labels[label][val] {
						t.Errorf("%s: %s never has %s=%q", s[0], name, label, val)
					}
				}
			}
		}
	}
}

var (
	inputSeries = regexp.MustCompile(`(?m)^\s*- series: '([^']*)'`)
	seriesParts = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\}$`)
)

// The test's input series must be series the tool writes: the same names with the same labels, plus the
// scrape's, and the same words for the values the tool takes from a fixed list.
func TestInputSeriesAreWhatTheToolWrites(t *testing.T) {
	exp := renderExposition(t)
	series := inputSeries.FindAllStringSubmatch(readFile(t, testsFile), -1)
	if len(series) == 0 {
		t.Fatalf("no input series found in %s", testsFile)
	}
	for _, s := range series {
		parts := seriesParts.FindStringSubmatch(s[1])
		if parts == nil {
			t.Errorf("%s: not name{labels}", s[1])
			continue
		}
		name := parts[1]
		want, ok := exp[name]
		if !ok {
			t.Errorf("%s: the tool writes no %s", s[1], name)
			continue
		}
		have := map[string]string{}
		for _, m := range matcher.FindAllStringSubmatch(parts[2], -1) {
			if m[2] != "=" {
				t.Errorf("%s: %s%s in an input series", s[1], m[1], m[2])
			}
			have[m[1]] = strings.Trim(m[3], `"`)
		}
		for _, l := range scrapeLabels {
			if have[l] == "" {
				t.Errorf("%s: no %s label, which every scraped series has", s[1], l)
			}
		}
		for l, v := range have {
			switch {
			case slices.Contains(scrapeLabels, l):
			case slices.Contains(futureLabels, l) && want["strategy"] != nil:
			case want[l] == nil:
				t.Errorf("%s: %s has no label %q", s[1], name, l)
			case slices.Contains([]string{"outcome", "touch", "strategy", "variant"}, l) && !want[l][v]:
				t.Errorf("%s: the tool never writes %s=%q", s[1], l, v)
			}
		}
		for l := range want {
			if _, ok := have[l]; !ok {
				t.Errorf("%s: missing the label %q that the tool writes on %s", s[1], l, name)
			}
		}
	}
}
