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
	policyv1 "k8s.io/api/policy/v1"
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
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
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
	if args := pod.Containers[0].Args; len(args) < 3 || args[0] != "run" || args[1] != "--once" || args[2] != "--pace" {
		t.Errorf("CronJob args %v, want run --once --pace: cron every few minutes runs only what the plan says is due", args)
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
	// The slowest start: a database's upgrade on a slow volume (the
	// longest, a month of every region's entries copied, about a minute)
	// and the start's wait on the upstream, at most --start-timeout's
	// default (10 s) whatever the upstream does. /healthz answers
	// throughout it, /readyz says "starting"; the startup probe still
	// allows twice that, a margin should anything hold the listener back.
	const slowestStart = 60 + 10
	if s := c.StartupProbe; s == nil || s.HTTPGet == nil || s.HTTPGet.Path != "/healthz" || s.PeriodSeconds*s.FailureThreshold < 2*slowestStart {
		t.Errorf("Deployment startup probe %+v, want GET /healthz allowing at least %d s", s, 2*slowestStart)
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
	restricted(t, what, pod)
}

// restricted: what Pod Security "restricted" asks of a pod, so that a
// namespace enforcing it admits the pod: not root, the runtime's default
// seccomp profile, no privilege escalation, every capability dropped.
func restricted(t *testing.T, what string, pod corev1.PodSpec) {
	t.Helper()
	psc := pod.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("%s: want runAsNonRoot", what)
	}
	podSeccomp := psc != nil && psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault
	for _, c := range append(pod.InitContainers, pod.Containers...) {
		s := c.SecurityContext
		if !podSeccomp && (s == nil || s.SeccompProfile == nil || s.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault) {
			t.Errorf("%s: container %s has no seccompProfile RuntimeDefault (pod or container)", what, c.Name)
		}
		if s == nil || s.AllowPrivilegeEscalation == nil || *s.AllowPrivilegeEscalation {
			t.Errorf("%s: container %s: want allowPrivilegeEscalation: false", what, c.Name)
		}
		if s == nil || s.Capabilities == nil || len(s.Capabilities.Drop) != 1 || s.Capabilities.Drop[0] != "ALL" {
			t.Errorf("%s: container %s: want capabilities drop [ALL]", what, c.Name)
		}
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

// imageComponent is the one file that names the image.
const imageComponent = "kubernetes/image/kustomization.yaml"

// kustomizedImage is the image the image component names, name:tag, with
// a pinned tag.
func kustomizedImage(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(imageComponent)
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
		t.Fatalf("%s: %v", imageComponent, err)
	}
	if k.Kind != "Component" || len(k.Resources) != 0 {
		t.Errorf("%s: kind %q with resources %v; want a Component naming the image alone", imageComponent, k.Kind, k.Resources)
	}
	if len(k.Images) != 1 || k.Images[0].Name != "ingest" || k.Images[0].NewName == "" || k.Images[0].NewTag == "" {
		t.Fatalf("%s: want one image entry for `ingest` with newName and newTag, got %+v", imageComponent, k.Images)
	}
	if tag := k.Images[0].NewTag; !pinnedTag.MatchString(tag) {
		t.Errorf("%s: newTag %q; want a release's version (%s), not a tag that moves", imageComponent, tag, pinnedTag)
	}
	return k.Images[0].NewName + ":" + k.Images[0].NewTag
}

// pinnedTag is a release's version: a restarted pod then runs what its
// neighbours run.
var pinnedTag = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+$`)

// TestKustomization renders `kubectl kustomize kubernetes` offline: the
// one-host daemon on its volume, the image the image component names, no
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

// TestImageIsNamedOnce: make image builds the image the component names,
// the quota apply Job (its own kustomization, outside the daemon's) runs
// it, and no other file names a registry.
func TestImageIsNamedOnce(t *testing.T) {
	image := kustomizedImage(t)
	if mk, err := exec.LookPath("make"); err == nil {
		// As at the release's own clean commit: past it, the tag says how far
		// (TestReleaseIsNamedOnce), and the manifests' pin is never taken.
		out, err := exec.Command(mk, "-s", "-n", "-C", "..", "image", "SINCE=0", "DIRTY=").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "docker build -t "+image+" ") {
			t.Errorf("make -n image at the release does not build %s: %v\n%s", image, err, out)
		}
	}
	m := render(t, ".", "kubernetes/redis")
	job, ok := m["Job"].(*batchv1.Job)
	if !ok {
		t.Fatalf("kubernetes/redis renders %v, want the quota apply Job", kinds(m))
	}
	if len(m) != 2 {
		t.Errorf("kubernetes/redis renders %v, want the Job alone", kinds(m))
	}
	c := job.Spec.Template.Spec.Containers[0]
	if c.Image != image || strings.Join(c.Args, " ") != "quota apply --new=QUOTA_KEY" || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("quota apply Job: image %q args %v restart %q; want %q, quota apply --new=QUOTA_KEY, Never", c.Image, c.Args, job.Spec.Template.Spec.RestartPolicy, image)
	}
	var files []string
	for _, g := range []string{"kubernetes/*.yaml", "kubernetes/*/*.yaml", "kubernetes-postgres/*.yaml", "kubernetes/*/README.md", "kubernetes-postgres/README.md"} {
		f, _ := filepath.Glob(g)
		files = append(files, f...)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if f != imageComponent && bytes.Contains(b, []byte(strings.Split(image, ":")[0])) {
			t.Errorf("%s names the image; %s alone does", f, imageComponent)
		}
	}
}

// TestImageNameMovesEveryPod changes newName and newTag in a copy of
// deploy/ and renders every kustomization: each pod, the quota apply
// Job's included, runs the new image.
func TestImageNameMovesEveryPod(t *testing.T) {
	kustomizedImage(t)
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-r", "kubernetes", "kubernetes-postgres", dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	p := filepath.Join(dir, imageComponent)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data = regexp.MustCompile(`(?m)^(\s*newName:).*$`).ReplaceAll(data, []byte("$1 registry.example.org/team/ingest"))
	data = regexp.MustCompile(`(?m)^(\s*newTag:).*$`).ReplaceAll(data, []byte(`$1 "9.8.7"`))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "registry.example.org/team/ingest:9.8.7"
	for _, k := range kustomizations {
		for name, pod := range pods(render(t, dir, k)) {
			for _, c := range pod.Containers {
				// The cache runs Varnish's image, not ingest's.
				if name == "Deployment/ingest-cache" && c.Name == "varnish" {
					continue
				}
				if c.Image != want {
					t.Errorf("%s: %s container %s runs %q after newName and newTag changed; want %q", k, name, c.Name, c.Image, want)
				}
			}
		}
	}
}

// kustomizations are the directories people apply with -k.
var kustomizations = []string{"kubernetes", "kubernetes/redis", "kubernetes-postgres"}

// TestPodsAreRestricted: every pod that any kustomization renders, and the
// CronJob kept beside them, passes Pod Security "restricted".
func TestPodsAreRestricted(t *testing.T) {
	all := map[string]corev1.PodSpec{}
	for _, k := range kustomizations {
		for name, pod := range pods(render(t, ".", k)) {
			all[k+": "+name] = pod
		}
	}
	for name, pod := range pods(manifests(t)) {
		all["kubernetes/*.yaml: "+name] = pod
	}
	if len(all) < 5 {
		t.Fatalf("found %d pod specs, want the daemon, the CronJob, the Job and serve: %v", len(all), all)
	}
	for name, pod := range all {
		restricted(t, name, pod)
	}
}

// render runs `kubectl kustomize DIR` in root and decodes what it prints.
func render(t *testing.T, root, dir string) map[string]any {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed: the kustomizations are not rendered")
	}
	cmd := exec.Command(kubectl, "kustomize", dir)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, out)
	}
	m := map[string]any{}
	decodeAll(t, "kubectl kustomize "+dir, out, m)
	return m
}

// pods is the pod spec of every workload in m, by kind and name.
func pods(m map[string]any) map[string]corev1.PodSpec {
	out := map[string]corev1.PodSpec{}
	for k, obj := range m {
		if !strings.Contains(k, "/") {
			continue
		}
		switch o := obj.(type) {
		case *appsv1.Deployment:
			out[k] = o.Spec.Template.Spec
		case *batchv1.Job:
			out[k] = o.Spec.Template.Spec
		case *batchv1.CronJob:
			out[k] = o.Spec.JobTemplate.Spec.Template.Spec
		}
	}
	return out
}
