// Package deploy checks the files people deploy ingest with: the
// Kubernetes manifests, and the PostgreSQL variant kubectl kustomize
// renders, decoded strictly into the real API types (k8s.io/api), the
// systemd units through systemd-analyze verify, and the
// Dockerfile's shape. It is a module of its own so that the Kubernetes
// types, which only these tests need, stay out of the product's go.mod.
package deploy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// manifests decodes every document of every file under kubernetes/ into
// its API type, refusing unknown or misspelt fields.
func manifests(t *testing.T) map[string]any {
	t.Helper()
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests under kubernetes/: %v", err)
	}
	out := map[string]any{}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		decodeAll(t, f, data, out)
	}
	return out
}

// decodeAll decodes every document of data into out, by kind.
func decodeAll(t *testing.T, f string, data []byte, out map[string]any) {
	t.Helper()
	{
		for i, doc := range bytes.Split(data, []byte("\n---")) {
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			obj, err := decode(meta.APIVersion, meta.Kind, doc)
			if err != nil {
				t.Errorf("%s document %d (%s %s): %v", f, i, meta.APIVersion, meta.Kind, err)
				continue
			}
			// By kind, and by kind and name where one kind comes twice.
			out[meta.Kind] = obj
			out[meta.Kind+"/"+meta.Metadata.Name] = obj
		}
	}
}

func decode(apiVersion, kind string, doc []byte) (any, error) {
	var obj any
	switch apiVersion + " " + kind {
	case "batch/v1 CronJob":
		obj = &batchv1.CronJob{}
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "v1 PersistentVolumeClaim":
		obj = &corev1.PersistentVolumeClaim{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "batch/v1 Job":
		obj = &batchv1.Job{}
	default:
		return nil, fmt.Errorf("no API type known for %s %s", apiVersion, kind)
	}
	return obj, yaml.UnmarshalStrict(doc, obj)
}

func TestKubernetesManifests(t *testing.T) {
	m := manifests(t)
	cj, ok := m["CronJob"].(*batchv1.CronJob)
	if !ok {
		t.Fatal("no CronJob")
	}
	if cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("CronJob concurrencyPolicy %q, want Forbid", cj.Spec.ConcurrencyPolicy)
	}
	pod := cj.Spec.JobTemplate.Spec.Template.Spec
	checkPod(t, "CronJob", pod)
	if args := pod.Containers[0].Args; len(args) < 2 || args[0] != "run" || args[1] != "--once" {
		t.Errorf("CronJob args %v, want run --once", args)
	}
	d, ok := m["Deployment"].(*appsv1.Deployment)
	if !ok {
		t.Fatal("no Deployment")
	}
	checkPod(t, "Deployment", d.Spec.Template.Spec)
	c := d.Spec.Template.Spec.Containers[0]
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("Deployment liveness probe %+v, want GET /healthz", c.LivenessProbe)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("Deployment readiness probe %+v, want GET /readyz", c.ReadinessProbe)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("Deployment: want one replica, strategy Recreate (SQLite has one writer)")
	}
}

// checkPod: a volume for the database, the secrets from a Secret, not
// root.
func checkPod(t *testing.T, what string, pod corev1.PodSpec) {
	t.Helper()
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", what, len(pod.Containers))
	}
	c := pod.Containers[0]
	mounted := false
	for _, vm := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == vm.Name && v.PersistentVolumeClaim != nil {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("%s: no persistent volume mounted for the database", what)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for _, name := range []string{"YOUTUBE_API_KEY", "REDIS_URL"} {
		if e, ok := env[name]; !ok || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Errorf("%s: %s must come from a Secret", what, name)
		}
	}
	// One host needs no Redis: the Secret may lack redis-url.
	if ref := env["REDIS_URL"].ValueFrom; ref != nil && ref.SecretKeyRef != nil &&
		(ref.SecretKeyRef.Optional == nil || !*ref.SecretKeyRef.Optional) {
		t.Errorf("%s: REDIS_URL's secretKeyRef must be optional (the one-host setup has no Redis)", what)
	}
	if db := env["INGEST_DB"].Value; !strings.HasPrefix(db, c.VolumeMounts[0].MountPath+"/") {
		t.Errorf("%s: INGEST_DB %q is not on the volume mounted at %s", what, db, c.VolumeMounts[0].MountPath)
	}
	if pod.SecurityContext == nil || pod.SecurityContext.RunAsNonRoot == nil || !*pod.SecurityContext.RunAsNonRoot {
		t.Errorf("%s: want runAsNonRoot", what)
	}
}

// TestSystemdUnits runs systemd-analyze verify on the units, with
// ExecStart pointed at a real binary (verify checks that it exists).
func TestSystemdUnits(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian's systemd package; make test installs it as root)")
	}
	units, err := filepath.Glob("systemd/ingest*.service")
	if err != nil || len(units) == 0 {
		t.Fatalf("no units: %v", err)
	}
	units = append(units, "systemd/ingest-once.timer")
	dir := t.TempDir()
	bin := filepath.Join(dir, "ingest")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, u := range units {
		data, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte("/usr/local/bin/ingest")) && strings.HasSuffix(u, ".service") {
			t.Errorf("%s does not run /usr/local/bin/ingest (where make install puts it)", u)
		}
		data = bytes.ReplaceAll(data, []byte("/usr/local/bin/ingest"), []byte(bin))
		p := filepath.Join(dir, filepath.Base(u))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	cmd := exec.Command(analyze, append([]string{"verify", "--man=no"}, paths...)...)
	out, err := cmd.CombinedOutput()
	// verify warns about the host (no running systemd in a container);
	// what matters is what it says about these files.
	var problems []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "ingest") {
			problems = append(problems, line)
		}
	}
	if len(problems) > 0 || (err != nil && len(out) == 0) {
		t.Errorf("systemd-analyze verify: %v\n%s", err, strings.Join(problems, "\n"))
	}
	t.Logf("systemd-analyze verify: %v\n%s", err, out)
}

// TestDockerfile checks the image's shape; building it needs a Docker
// daemon, which the tests do not assume.
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []struct{ what, re string }{
		{"a build stage", `(?m)^FROM \S+ AS build$`},
		{"a static build", `CGO_ENABLED=0 go build`},
		{"an empty final image", `(?m)^FROM scratch$`},
		{"time zones", `/usr/share/zoneinfo`},
		{"CA certificates", `ca-certificates.crt`},
		{"a non-root user", `(?m)^USER [1-9][0-9]*:[1-9][0-9]*$`},
		// ingest probe asks /healthz of whichever listener the container
		// runs, run --listen or serve.
		{"a health check by ingest probe", `(?m)HEALTHCHECK[^\n]*(\\\n[^\n]*)*ingest", "probe"\]`},
		{"the binary as entrypoint", `(?m)^ENTRYPOINT \["/usr/local/bin/ingest"\]$`},
	} {
		if !regexp.MustCompile(want.re).MatchString(text) {
			t.Errorf("Dockerfile lacks %s (%s)", want.what, want.re)
		}
	}
	if n := strings.Count(text, "\nFROM "); n < 2 {
		t.Errorf("Dockerfile has %d stages, want a multi-stage build", n)
	}
}

// maxExposure is the highest "overall exposure level" systemd-analyze
// security may give a unit: sandboxing, capabilities and system calls all
// limited.
const maxExposure = 2.5

// TestSystemdUnitsAreHardened rates each service with systemd-analyze
// security, offline, against the file as shipped.
func TestSystemdUnitsAreHardened(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian's systemd package; make test installs it as root)")
	}
	units, err := filepath.Glob("systemd/ingest*.service")
	if err != nil || len(units) == 0 {
		t.Fatalf("no units: %v", err)
	}
	level := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`)
	for _, u := range units {
		// --offline reads the file as it is; ExecStart must exist, as for verify.
		data, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), filepath.Base(u))
		if err := os.WriteFile(p, bytes.ReplaceAll(data, []byte("/usr/local/bin/ingest"), []byte("/bin/true")), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(analyze, "security", "--offline=true", "--no-pager", p).CombinedOutput()
		m := level.FindSubmatch(out)
		if m == nil {
			t.Fatalf("%s: no exposure level in systemd-analyze security's output:\n%s", u, out)
		}
		var got float64
		fmt.Sscan(string(m[1]), &got)
		if got > maxExposure {
			t.Errorf("%s: exposure %.1f, want at most %.1f; what is left open:\n%s", u, got, maxExposure, open(out))
		}
		t.Logf("%s: exposure %.1f", u, got)
	}
}

// open is the lines of systemd-analyze security that name what a unit
// leaves open.
func open(out []byte) string {
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "✗") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// kustomizedImage is the image kustomization.yaml names, name:tag.
func kustomizedImage(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("kubernetes/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
		Images     []struct {
			Name    string `json:"name"`
			NewName string `json:"newName"`
			NewTag  string `json:"newTag"`
		} `json:"images"`
	}
	if err := yaml.UnmarshalStrict(data, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	if len(k.Images) != 1 || k.Images[0].Name != "ingest" || k.Images[0].NewName == "" || k.Images[0].NewTag == "" {
		t.Fatalf("kustomization.yaml: want one image entry for `ingest` with newName and newTag, got %+v", k.Images)
	}
	return k.Images[0].NewName + ":" + k.Images[0].NewTag
}

// TestKustomization renders `kubectl kustomize kubernetes` offline: the
// one-host daemon on its volume, the image kustomization.yaml names, no
// Secret (it is created by hand) and no quota apply (a one-shot step).
func TestKustomization(t *testing.T) {
	image := kustomizedImage(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed: the kustomization is not rendered (its image entry was checked)")
	}
	out, err := exec.Command(kubectl, "kustomize", "kubernetes").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize kubernetes: %v\n%s", err, out)
	}
	m := map[string]any{}
	decodeAll(t, "kubectl kustomize kubernetes", out, m)
	d, ok := m["Deployment"].(*appsv1.Deployment)
	if !ok || m["PersistentVolumeClaim"] == nil {
		t.Fatalf("rendered: want a Deployment and its PersistentVolumeClaim, got %v", kinds(m))
	}
	for _, k := range []string{"Secret", "Job", "CronJob"} {
		if m[k] != nil {
			t.Errorf("rendered: a %s; the kustomization is the daemon alone (the Secret by hand, quota apply once, the CronJob instead)", k)
		}
	}
	checkPod(t, "rendered Deployment", d.Spec.Template.Spec)
	if got := d.Spec.Template.Spec.Containers[0].Image; got != image {
		t.Errorf("rendered image %q, want %q", got, image)
	}
}

func kinds(m map[string]any) []string {
	var out []string
	for k := range m {
		if !strings.Contains(k, "/") {
			out = append(out, k)
		}
	}
	return out
}

// TestImageIsNamedOnce: make image builds the image kustomization.yaml
// names, the quota apply Job (applied with -f, outside the kustomization)
// runs it, and no other manifest names a registry.
func TestImageIsNamedOnce(t *testing.T) {
	image := kustomizedImage(t)
	if mk, err := exec.LookPath("make"); err == nil {
		out, err := exec.Command(mk, "-s", "-n", "-C", "..", "image").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "docker build -t "+image+" ") {
			t.Errorf("make -n image does not build %s: %v\n%s", image, err, out)
		}
	}
	data, err := os.ReadFile("kubernetes/redis/quota-apply-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	decodeAll(t, "redis/quota-apply-job.yaml", data, m)
	job, ok := m["Job"].(*batchv1.Job)
	if !ok {
		t.Fatal("redis/quota-apply-job.yaml: no Job")
	}
	c := job.Spec.Template.Spec.Containers[0]
	if c.Image != image || strings.Join(c.Args, " ") != "quota apply --new" || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("quota apply Job: image %q args %v restart %q; want %q, quota apply --new, Never", c.Image, c.Args, job.Spec.Template.Spec.RestartPolicy, image)
	}
	files, _ := filepath.Glob("kubernetes/*.yaml")
	pg, _ := filepath.Glob("kubernetes-postgres/*.yaml")
	for _, f := range append(files, pg...) {
		b, _ := os.ReadFile(f)
		if f != "kubernetes/kustomization.yaml" && bytes.Contains(b, []byte(strings.Split(image, ":")[0])) {
			t.Errorf("%s names the image; kustomization.yaml alone does", f)
		}
	}
}
