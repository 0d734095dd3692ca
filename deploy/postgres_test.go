package deploy

import (
	"net"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// pgDir is the PostgreSQL variant: an overlay of kubernetes/, beside it
// (kustomize refuses an overlay inside its base's directory).
const pgDir = "kubernetes-postgres"

// TestPostgresKustomization renders `kubectl kustomize kubernetes-postgres`
// offline and decodes it strictly: the daemon and serve, each with more
// than one replica, on the database URL from the Secret and its Redis URL if it has one,
// with no volume, no Secret and the image of the base.
func TestPostgresKustomization(t *testing.T) {
	image := kustomizedImage(t)
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed: the PostgreSQL variant is not rendered")
	}
	out, err := exec.Command(kubectl, "kustomize", pgDir).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", pgDir, err, out)
	}
	m := map[string]any{}
	decodeAll(t, "kubectl kustomize "+pgDir, out, m)
	for _, k := range []string{"PersistentVolumeClaim", "Secret", "Job", "CronJob"} {
		if m[k] != nil {
			t.Errorf("rendered: a %s; the variant has no volume (the data is PostgreSQL's), the Secret is created by hand, quota apply is a one-shot Job", k)
		}
	}
	run, ok1 := m["Deployment/ingest"].(*appsv1.Deployment)
	serve, ok2 := m["Deployment/ingest-serve"].(*appsv1.Deployment)
	svc, ok3 := m["Service/ingest-serve"].(*corev1.Service)
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("rendered: want Deployments ingest and ingest-serve and Service ingest-serve, got %v", kinds(m))
	}
	secret := exampleSecret(t)
	checkPostgresDeployment(t, run, image, "run", secret)
	checkPostgresDeployment(t, serve, image, "serve", secret)

	rc := run.Spec.Template.Spec.Containers[0]
	if e := envOf(rc)["INGEST_RUN_LISTEN"]; !listensOn(e.Value, rc, "metrics") {
		t.Errorf("ingest: INGEST_RUN_LISTEN %q is not the container's metrics port", e.Value)
	}
	sc := serve.Spec.Template.Spec.Containers[0]
	// The readers' replicas: --public, so that a cache in front may keep
	// their answers, and never all taken down at once by a drain.
	if !slices.Contains(sc.Args, "--public") {
		t.Errorf("ingest-serve: args %q, want serve --public behind the cache", sc.Args)
	}
	pdb, ok := m["PodDisruptionBudget/ingest-serve"].(*policyv1.PodDisruptionBudget)
	if !ok || pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 ||
		!selects(pdb.Spec.Selector, serve.Spec.Template.Labels) || selects(pdb.Spec.Selector, run.Spec.Template.Labels) {
		t.Errorf("rendered: want a PodDisruptionBudget ingest-serve keeping at least one of serve's pods, and only its pods, up; got %v", kinds(m))
	} else if int32(pdb.Spec.MinAvailable.IntValue()) >= *serve.Spec.Replicas {
		t.Errorf("PodDisruptionBudget ingest-serve: minAvailable %d of %d replicas: a drain could never move one", pdb.Spec.MinAvailable.IntValue(), *serve.Spec.Replicas)
	}
	if e := envOf(sc)["INGEST_SERVE_LISTEN"]; !listensOn(e.Value, sc, "http") {
		t.Errorf("ingest-serve: INGEST_SERVE_LISTEN %q is not the container's http port on every address", e.Value)
	}
	// serve exits 2 on a non-loopback address without a token.
	fromSecret(t, "ingest-serve", sc, "INGEST_UI_TOKEN", secret, false)

	// Two Deployments: neither selector may take the other's pods.
	if selects(run.Spec.Selector, serve.Spec.Template.Labels) || selects(serve.Spec.Selector, run.Spec.Template.Labels) {
		t.Errorf("the selectors of ingest (%v) and ingest-serve (%v) overlap", run.Spec.Selector.MatchLabels, serve.Spec.Selector.MatchLabels)
	}
	if !selects(&metav1.LabelSelector{MatchLabels: svc.Spec.Selector}, serve.Spec.Template.Labels) ||
		selects(&metav1.LabelSelector{MatchLabels: svc.Spec.Selector}, run.Spec.Template.Labels) {
		t.Errorf("Service ingest-serve selects %v: want serve's pods and only them", svc.Spec.Selector)
	}
	for _, p := range svc.Spec.Ports {
		if !hasPort(sc, p.TargetPort) {
			t.Errorf("Service ingest-serve targets port %s, which serve's container does not declare", p.TargetPort.StrVal)
		}
	}
}

// checkPostgresDeployment: more than one replica of `ingest <command>`,
// the base's image, no volume, INGEST_DB from the Secret, REDIS_URL from
// it optionally (without Redis, the limiter in the database: the README
// says so), no URL in plain text, the probes on a declared port, not root.
func checkPostgresDeployment(t *testing.T, d *appsv1.Deployment, image, command string, secret *corev1.Secret) {
	t.Helper()
	what := d.Name
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		n := int32(1) // the API's default
		if d.Spec.Replicas != nil {
			n = *d.Spec.Replicas
		}
		t.Errorf("%s: %d replica(s), want more than one", what, n)
	}
	if !selects(d.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("%s: selector %v does not select its own pods %v", what, d.Spec.Selector, d.Spec.Template.Labels)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", what, len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.Image != image {
		t.Errorf("%s: image %q, want %q (the one kubernetes/image/kustomization.yaml names)", what, c.Image, image)
	}
	if len(c.Args) == 0 || c.Args[0] != command {
		t.Errorf("%s: args %v, want %s", what, c.Args, command)
	}
	if len(pod.Volumes) != 0 || len(c.VolumeMounts) != 0 {
		t.Errorf("%s: volumes %v, mounts %v; want none (the data is PostgreSQL's)", what, pod.Volumes, c.VolumeMounts)
	}
	fromSecret(t, what, c, "INGEST_DB", secret, false)
	fromSecret(t, what, c, "REDIS_URL", secret, true)
	if command == "serve" {
		// The public replicas: no upstream key (serve reads the quota
		// key's hash from the database), and a role of their own.
		if _, ok := envOf(c)["YOUTUBE_API_KEY"]; ok {
			t.Errorf("%s: YOUTUBE_API_KEY is given to the replicas that face the internet; serve needs no upstream key", what)
		}
		if ref := envOf(c)["INGEST_DB"].ValueFrom; ref == nil || ref.SecretKeyRef == nil || ref.SecretKeyRef.Key != "serve-database-url" {
			t.Errorf("%s: INGEST_DB not from the Secret's serve-database-url, the role serve-role.sql makes", what)
		}
	} else {
		fromSecret(t, what, c, "YOUTUBE_API_KEY", secret, false)
	}
	for _, e := range c.Env {
		if strings.Contains(e.Value, "://") {
			t.Errorf("%s: %s holds a URL in plain text; URLs carry passwords, they come from the Secret", what, e.Name)
		}
	}
	for _, p := range []struct {
		what  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || !hasPort(c, p.probe.HTTPGet.Port) {
			t.Errorf("%s: %s probe %+v, want GET %s on a port the container declares", what, p.what, p.probe, p.path)
		}
	}
	restricted(t, what, pod)
	if s := c.SecurityContext; s == nil || s.ReadOnlyRootFilesystem == nil || !*s.ReadOnlyRootFilesystem ||
		s.AllowPrivilegeEscalation == nil || *s.AllowPrivilegeEscalation {
		t.Errorf("%s: want a read-only root file system and no privilege escalation", what)
	}
}

// fromSecret: env name of c comes from a key the example Secret has, and
// is optional exactly when optional says so.
func fromSecret(t *testing.T, what string, c corev1.Container, name string, secret *corev1.Secret, optional bool) {
	t.Helper()
	e, ok := envOf(c)[name]
	if !ok || e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
		t.Errorf("%s: %s must come from the Secret", what, name)
		return
	}
	ref := e.ValueFrom.SecretKeyRef
	if ref.Name != secret.Name {
		t.Errorf("%s: %s from Secret %q, want %q", what, name, ref.Name, secret.Name)
	}
	if _, ok := secret.StringData[ref.Key]; !ok {
		t.Errorf("%s: %s from key %q, which secret.example.yaml lacks", what, name, ref.Key)
	}
	if got := ref.Optional != nil && *ref.Optional; got != optional {
		t.Errorf("%s: %s's secretKeyRef optional: %v, want %v", what, name, got, optional)
	}
}

// exampleSecret decodes kubernetes-postgres/secret.example.yaml strictly.
func exampleSecret(t *testing.T) *corev1.Secret {
	t.Helper()
	f := pgDir + "/secret.example.yaml"
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	decodeAll(t, f, data, m)
	s, ok := m["Secret"].(*corev1.Secret)
	if !ok {
		t.Fatalf("%s: no Secret", f)
	}
	return s
}

// TestPostgresSecretExample: the example holds placeholders only, clearly
// marked, and a database URL of the form docs/operations.md gives.
func TestPostgresSecretExample(t *testing.T) {
	s := exampleSecret(t)
	if len(s.Data) != 0 {
		t.Errorf("secret.example.yaml: data %v; want stringData, readable placeholders", s.Data)
	}
	for _, k := range []string{"youtube-api-key", "redis-url", "database-url", "serve-database-url", "ui-token"} {
		v, ok := s.StringData[k]
		if !ok {
			t.Errorf("secret.example.yaml: no %s", k)
		} else if !strings.Contains(v, "REPLACE-ME") {
			// The value is not printed: it may be a real one.
			t.Errorf("secret.example.yaml: %s holds no REPLACE-ME placeholder", k)
		}
	}
	// An unedited copy must not serve behind a token anyone can read here:
	// serve refuses one shorter than 20 characters (docs/contract.md).
	if tok := s.StringData["ui-token"]; len(tok) >= 20 {
		t.Errorf("secret.example.yaml: the ui-token placeholder has %d characters: serve would take it unedited; keep it under 20", len(tok))
	}
	u, err := url.Parse(s.StringData["database-url"])
	if err != nil {
		t.Fatalf("secret.example.yaml: database-url: %v", err)
	}
	pw, _ := u.User.Password()
	if u.Scheme != "postgres" || u.User.Username() == "" || pw != "REPLACE-ME" || u.Port() != "5432" ||
		u.Path != "/ingest" || u.Query().Get("sslmode") == "" {
		t.Errorf("secret.example.yaml: database-url %q; want postgres://USER:REPLACE-ME@HOST:5432/ingest?sslmode=...", u.Redacted())
	}
	if r, err := url.Parse(s.StringData["redis-url"]); err != nil || r.Scheme != "redis" {
		t.Errorf("secret.example.yaml: redis-url %q is not a redis:// URL (%v)", s.StringData["redis-url"], err)
	}
}

func envOf(c corev1.Container) map[string]corev1.EnvVar {
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	return env
}

// hasPort: p names or numbers a port c declares.
func hasPort(c corev1.Container, p intstr.IntOrString) bool {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && p.StrVal == cp.Name) || (p.Type == intstr.Int && p.IntVal == cp.ContainerPort) {
			return true
		}
	}
	return false
}

// listensOn: addr is ":PORT" (every address, so probes from the kubelet
// reach it) and PORT is c's port named name.
func listensOn(addr string, c corev1.Container, name string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "" {
		return false
	}
	for _, cp := range c.Ports {
		if cp.Name == name && port == strconv.Itoa(int(cp.ContainerPort)) {
			return true
		}
	}
	return false
}

// selects: sel, of match labels only, takes pods labelled labels.
func selects(sel *metav1.LabelSelector, labels map[string]string) bool {
	if sel == nil || len(sel.MatchLabels) == 0 || len(sel.MatchExpressions) != 0 {
		return false
	}
	for k, v := range sel.MatchLabels {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestSystemdEnvExample: every setting of ingest.env.example, commented
// out or not, is NAME=value with nothing after the value (systemd would
// read a trailing comment into it), and a URL in it carries a placeholder
// password; the PostgreSQL one is of the form docs/operations.md gives.
func TestSystemdEnvExample(t *testing.T) {
	data, err := os.ReadFile("systemd/ingest.env.example")
	if err != nil {
		t.Fatal(err)
	}
	setting := regexp.MustCompile(`^(?:# )?([A-Z][A-Z0-9_]*)=(.*)$`)
	seen := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		m := setting.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, value := m[1], m[2]
		seen[name] = value
		if strings.ContainsAny(value, " \t#") {
			t.Errorf("ingest.env.example:%d: %s's value %q has a space or a #: systemd would keep a trailing comment in it", i+1, name, value)
		}
		if u, err := url.Parse(value); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && pw != "PASSWORD" && pw != "REPLACE-ME" {
				t.Errorf("ingest.env.example:%d: %s carries a password that is not a placeholder", i+1, name)
			}
		}
	}
	u, err := url.Parse(seen["INGEST_DB"])
	if err != nil || u.Scheme != "postgres" || u.Port() != "5432" || u.Query().Get("sslmode") == "" {
		t.Errorf("ingest.env.example: want an INGEST_DB=postgres://USER:PASSWORD@HOST:5432/ingest?sslmode=... example, got %q", seen["INGEST_DB"])
	}
	if _, ok := seen["REDIS_URL"]; !ok {
		t.Error("ingest.env.example: no REDIS_URL example")
	}
}

// TestPostgresDocs: the links to the variant and to its page resolve.
func TestPostgresDocs(t *testing.T) {
	const page = "docs/operations/store.md"
	ops, err := os.ReadFile("../" + page)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^# Choosing a store$`).Match(ops) {
		t.Error(page + ": not titled \"Choosing a store\" (docs/howto/postgres-or-redis.md and " + pgDir + "/README.md link to it)")
	}
	if !strings.Contains(string(ops), "deploy/"+pgDir) {
		t.Errorf("%s does not name deploy/%s", page, pgDir)
	}
	for _, f := range []string{"../docs/howto/postgres-or-redis.md", pgDir + "/README.md"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "operations/store.md") {
			t.Errorf("%s does not link %s", f, page)
		}
	}
}
