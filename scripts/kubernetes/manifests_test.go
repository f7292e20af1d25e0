package kubernetes

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// No cluster runs here, so the recipes are checked offline: each kustomization is built with kustomize's
// own library, every object it yields is decoded strictly into its Kubernetes API type (an unknown or
// misspelt field fails), and what strict decoding cannot see is asserted explicitly.

// objects builds a kustomization and decodes each object strictly into its API type.
func objects(t *testing.T, dir string) map[string]any {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out := map[string]any{}
	for _, r := range res.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		var obj any
		switch r.GetKind() {
		case "Job":
			obj = &batchv1.Job{}
		case "CronJob":
			obj = &batchv1.CronJob{}
		case "Namespace":
			obj = &corev1.Namespace{}
		case "PersistentVolumeClaim":
			obj = &corev1.PersistentVolumeClaim{}
		default:
			t.Errorf("%s: unexpected kind %s", dir, r.GetKind())
			continue
		}
		if err := yaml.UnmarshalStrict(b, obj); err != nil {
			t.Errorf("%s: %s %s does not decode strictly: %v", dir, r.GetKind(), r.GetName(), err)
			continue
		}
		if r.GetApiVersion() != map[string]string{"Job": "batch/v1", "CronJob": "batch/v1", "Namespace": "v1", "PersistentVolumeClaim": "v1"}[r.GetKind()] {
			t.Errorf("%s: %s has apiVersion %s", dir, r.GetKind(), r.GetApiVersion())
		}
		out[r.GetKind()+"/"+r.GetName()] = obj
	}
	return out
}

// checkPod asserts what a pod of the recipes must have, whatever strict decoding lets through.
func checkPod(t *testing.T, where string, spec *corev1.PodSpec, labels map[string]string, command string) {
	t.Helper()
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("%s: restartPolicy %q, want Never (a Job's pod, and a probe that ran is not run again)", where, spec.RestartPolicy)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", where, len(spec.Containers))
	}
	c := spec.Containers[0]
	if c.Name != "clmemprobe" || c.Image == "" || !strings.HasPrefix(c.Image, "clmemprobe") {
		t.Errorf("%s: container %q image %q", where, c.Name, c.Image)
	}
	script := strings.Join(c.Command, " ")
	if !strings.Contains(script, command) {
		t.Errorf("%s: the command does not run %q: %s", where, command, script)
	}
	if _, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		t.Errorf("%s: a memory limit would be the limit the probe finds", where)
	}
	if c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation {
		t.Errorf("%s: want allowPrivilegeEscalation: false", where)
	}
	// Every mount names a volume of the pod.
	for _, m := range c.VolumeMounts {
		if !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name }) {
			t.Errorf("%s: mount %s names no volume", where, m.Name)
		}
	}
	if labels["app.kubernetes.io/name"] != "clmemprobe" {
		t.Errorf("%s: pod labels %v", where, labels)
	}
}

// checkOnePerNode asserts an Indexed Job that puts one pod on each node.
func checkOnePerNode(t *testing.T, where string, spec *batchv1.JobSpec) {
	t.Helper()
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("%s: completionMode %v, want Indexed", where, spec.CompletionMode)
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Completions < 1 || *spec.Parallelism != *spec.Completions {
		t.Errorf("%s: completions %v parallelism %v: want them equal, one pod per node at once", where, spec.Completions, spec.Parallelism)
	}
	if spec.BackoffLimitPerIndex == nil || *spec.BackoffLimitPerIndex != 0 || spec.MaxFailedIndexes == nil || *spec.MaxFailedIndexes != *spec.Completions {
		t.Errorf("%s: a failed node must not be probed again nor stop the others: backoffLimitPerIndex 0, maxFailedIndexes = completions", where)
	}
	aff := spec.Template.Spec.Affinity
	if aff == nil || aff.PodAntiAffinity == nil || len(aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Fatalf("%s: want one required pod anti-affinity term", where)
	}
	term := aff.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	if term.TopologyKey != "kubernetes.io/hostname" || term.LabelSelector == nil {
		t.Fatalf("%s: anti-affinity on %q", where, term.TopologyKey)
	}
	// The selector must match the job's own pods, and no pod of the other job.
	for k, v := range term.LabelSelector.MatchLabels {
		if spec.Template.Labels[k] != v {
			t.Errorf("%s: the anti-affinity selects %s=%s, which the pods do not carry (%v)", where, k, v, spec.Template.Labels)
		}
	}
	if term.LabelSelector.MatchLabels["app.kubernetes.io/component"] == "" {
		t.Errorf("%s: the anti-affinity must name the component, or the probe and the metrics pods would keep each other off a node", where)
	}
}

func TestBaseAndOverlays(t *testing.T) {
	gpus := map[string]corev1.ResourceName{"nvidia": "nvidia.com/gpu", "amd": "amd.com/gpu", "intel": "gpu.intel.com/i915"}
	for vendor, res := range gpus {
		t.Run(vendor, func(t *testing.T) {
			objs := objects(t, filepath.Join("overlays", vendor))
			for _, name := range []string{"Namespace/clmemprobe", "PersistentVolumeClaim/clmemprobe-results", "Job/clmemprobe-probe", "CronJob/clmemprobe-metrics"} {
				if objs[name] == nil {
					t.Fatalf("%s missing from the build (have %v)", name, keys(objs))
				}
			}
			pvc := objs["PersistentVolumeClaim/clmemprobe-results"].(*corev1.PersistentVolumeClaim)
			if pvc.Namespace != "clmemprobe" || !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
				t.Errorf("the results volume: namespace %q, access %v; every node writes to it: ReadWriteMany", pvc.Namespace, pvc.Spec.AccessModes)
			}
			job := objs["Job/clmemprobe-probe"].(*batchv1.Job)
			if job.Namespace != "clmemprobe" {
				t.Errorf("probe namespace %q", job.Namespace)
			}
			checkOnePerNode(t, "probe", &job.Spec)
			checkPod(t, "probe", &job.Spec.Template.Spec, job.Spec.Template.Labels, `clmemprobe run --force --out "/results/$NODE_NAME"`)
			checkGPU(t, "probe", &job.Spec.Template.Spec, res)
			if v := volume(&job.Spec.Template.Spec, "results"); v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != pvc.Name {
				t.Errorf("the probe must write to the results claim %s", pvc.Name)
			}
			if env := envOf(&job.Spec.Template.Spec, "NODE_NAME"); env == nil || env.ValueFrom == nil || env.ValueFrom.FieldRef == nil || env.ValueFrom.FieldRef.FieldPath != "spec.nodeName" {
				t.Errorf("NODE_NAME must come from spec.nodeName: the result folder is named by it")
			}
			cron := objs["CronJob/clmemprobe-metrics"].(*batchv1.CronJob)
			if cron.Spec.Suspend == nil || !*cron.Spec.Suspend || cron.Spec.Schedule == "" || cron.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
				t.Errorf("the metrics CronJob: suspended until enabled, a schedule, never two at once")
			}
			checkOnePerNode(t, "metrics", &cron.Spec.JobTemplate.Spec)
			pod := &cron.Spec.JobTemplate.Spec.Template.Spec
			checkPod(t, "metrics", pod, cron.Spec.JobTemplate.Spec.Template.Labels, "clmemprobe run --format json --prom /textfile/clmemprobe.prom")
			checkGPU(t, "metrics", pod, res)
			if v := volume(pod, "textfile"); v == nil || v.HostPath == nil || v.HostPath.Path != "/var/lib/node_exporter/textfile_collector" {
				t.Errorf("the metrics go to node_exporter's textfile folder on the node")
			}
			for _, other := range gpus {
				if other != res && (hasResource(&job.Spec.Template.Spec, other) || hasResource(pod, other)) {
					t.Errorf("the %s overlay asks for %s too", vendor, other)
				}
			}
		})
	}
}

func TestMergeJob(t *testing.T) {
	objs := objects(t, "merge")
	job, ok := objs["Job/clmemprobe-merge"].(*batchv1.Job)
	if !ok || len(objs) != 1 {
		t.Fatalf("want the merge Job alone, got %v", keys(objs))
	}
	if job.Namespace != "clmemprobe" || job.Spec.BackoffLimit == nil || *job.Spec.BackoffLimit != 0 || job.Spec.CompletionMode != nil {
		t.Errorf("merge: namespace %q, backoffLimit %v, completionMode %v; want clmemprobe, 0, none", job.Namespace, job.Spec.BackoffLimit, job.Spec.CompletionMode)
	}
	checkPod(t, "merge", &job.Spec.Template.Spec, job.Spec.Template.Labels, "clmemprobe merge --format markdown --output /results/fleet.md /results")
	if v := volume(&job.Spec.Template.Spec, "results"); v == nil || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "clmemprobe-results" {
		t.Errorf("the merge must read the probe's results claim")
	}
}

// Every YAML file in the folder is part of a kustomization the tests build: none is left unchecked.
func TestEveryManifestIsBuilt(t *testing.T) {
	used := map[string]bool{}
	for _, dir := range []string{"base", "merge", "overlays/nvidia", "overlays/amd", "overlays/intel"} {
		b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		used[filepath.Join(dir, "kustomization.yaml")] = true
		var k struct {
			Resources []string `json:"resources"`
			Patches   []struct {
				Path string `json:"path"`
			} `json:"patches"`
		}
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatal(err)
		}
		for _, r := range k.Resources {
			used[filepath.Clean(filepath.Join(dir, r))] = true
		}
		for _, p := range k.Patches {
			used[filepath.Join(dir, p.Path)] = true
		}
	}
	_ = filepath.Walk(".", func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.HasSuffix(p, ".yaml") && !used[p] {
			t.Errorf("%s is in no kustomization the tests build", p)
		}
		return nil
	})
}

func checkGPU(t *testing.T, where string, spec *corev1.PodSpec, res corev1.ResourceName) {
	t.Helper()
	q, ok := spec.Containers[0].Resources.Limits[res]
	if !ok || q.Cmp(resource.MustParse("1")) < 0 {
		t.Errorf("%s: want a limit on %s of at least 1, got %v", where, res, spec.Containers[0].Resources.Limits)
	}
	if q.Value() < 2 {
		t.Errorf("%s: %s %s: the multi-device strategies need two GPUs per pod", where, res, q.String())
	}
}

func hasResource(spec *corev1.PodSpec, res corev1.ResourceName) bool {
	_, ok := spec.Containers[0].Resources.Limits[res]
	return ok
}

func volume(spec *corev1.PodSpec, name string) *corev1.Volume {
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == name {
			return &spec.Volumes[i]
		}
	}
	return nil
}

func envOf(spec *corev1.PodSpec, name string) *corev1.EnvVar {
	for i := range spec.Containers[0].Env {
		if spec.Containers[0].Env[i].Name == name {
			return &spec.Containers[0].Env[i]
		}
	}
	return nil
}

func keys(m map[string]any) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return fmt.Sprint(out)
}
