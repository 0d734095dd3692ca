// Package deploy checks the files people deploy ingest with: the
// Kubernetes manifests decoded strictly into the real API types
// (k8s.io/api), the systemd units through systemd-analyze verify, and the
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
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(data, []byte("\n---")) {
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := yaml.Unmarshal(doc, &meta); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			obj, err := decode(meta.APIVersion, meta.Kind, doc)
			if err != nil {
				t.Errorf("%s document %d (%s %s): %v", f, i, meta.APIVersion, meta.Kind, err)
				continue
			}
			out[meta.Kind] = obj
		}
	}
	return out
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
		{"a health check on /healthz", `(?m)HEALTHCHECK[^\n]*(\\\n[^\n]*)*/healthz`},
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
