package deploy

import (
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cacheDir is the cache's kustomization, a resource of the PostgreSQL
// variant's.
const cacheDir = pgDir + "/cache"

// TestKubernetesCache renders the PostgreSQL variant and checks the cache
// beside serve's replicas: Varnish on the shipped VCL, unchanged, and a
// backends.vcl that names serve's Service and port, probes the path serve's
// pods are gated on, and lets the pod network purge; serve purging the
// cache's Service and trusting the same network; the cache's Service
// selecting the cache alone; and the VCL as generated compiling.
func TestKubernetesCache(t *testing.T) {
	m := render(t, ".", pgDir)
	cache, ok1 := m["Deployment/ingest-cache"].(*appsv1.Deployment)
	cacheSvc, ok2 := m["Service/ingest-cache"].(*corev1.Service)
	cm, ok3 := m["ConfigMap"].(*corev1.ConfigMap)
	serve, ok4 := m["Deployment/ingest-serve"].(*appsv1.Deployment)
	serveSvc, ok5 := m["Service/ingest-serve"].(*corev1.Service)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		t.Fatalf("rendered %v: want Deployment and Service ingest-cache, its ConfigMap, Deployment and Service ingest-serve", kinds(m))
	}

	shipped, err := os.ReadFile("varnish/ingest.vcl")
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["ingest.vcl"] != string(shipped) {
		t.Errorf("the cache's ingest.vcl is not deploy/varnish/ingest.vcl: kustomize reads no file outside its directory, so copy it: cp deploy/varnish/ingest.vcl deploy/%s/ingest.vcl", cacheDir)
	}
	backends := cm.Data["backends.vcl"]
	pod := cache.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("ingest-cache: %d containers, want varnishd alone", len(pod.Containers))
	}
	c := pod.Containers[0]
	mounted := false
	for _, v := range pod.Volumes {
		mounted = mounted || v.ConfigMap != nil && v.ConfigMap.Name == cm.Name
	}
	if !mounted {
		t.Errorf("ingest-cache mounts no volume of the ConfigMap %s", cm.Name)
	}
	args := strings.Join(c.Args, " ")
	if !strings.Contains(args, "-f /etc/varnish/ingest.vcl") || !strings.Contains(args, "vcl_path=/etc/varnish") {
		t.Errorf("ingest-cache: args %q, want the VCL from /etc/varnish", args)
	}
	if a := regexp.MustCompile(`-a http=:([0-9]+)`).FindStringSubmatch(args); a == nil || !listensOn(":"+a[1], c, "http") {
		t.Errorf("ingest-cache: args %q do not listen on the container's http port", args)
	}
	// Under a read-only root varnishd writes its working directory (the
	// compiled VCL, the shared log) and the C compiler its files in /tmp.
	work := flagValue(c.Args, "-n")
	for _, dir := range []string{work, "/tmp"} {
		writable := false
		for _, m := range c.VolumeMounts {
			writable = writable || m.MountPath == dir && !m.ReadOnly
		}
		if !writable {
			t.Errorf("ingest-cache: %q is not a writable volume (working directory %q)", dir, work)
		}
	}

	// The origin: serve's Service by name and port, probed where serve's
	// pods are gated.
	host := vclField(t, backends, "host")
	if host != serveSvc.Name || vclField(t, backends, "port") != strconv.Itoa(int(serveSvc.Spec.Ports[0].Port)) {
		t.Errorf("backends.vcl: origin %s:%s, want serve's Service %s:%d", host, vclField(t, backends, "port"), serveSvc.Name, serveSvc.Spec.Ports[0].Port)
	}
	sc := serve.Spec.Template.Spec.Containers[0]
	if probe := vclField(t, backends, "url"); sc.ReadinessProbe == nil || sc.ReadinessProbe.HTTPGet == nil || probe != sc.ReadinessProbe.HTTPGet.Path {
		t.Errorf("backends.vcl probes %s; want serve's readiness path", probe)
	}

	// The cache's Service: the cache's pods alone, on a declared port.
	sel := &metav1.LabelSelector{MatchLabels: cacheSvc.Spec.Selector}
	if !selects(sel, cache.Spec.Template.Labels) || selects(sel, serve.Spec.Template.Labels) ||
		selects(&metav1.LabelSelector{MatchLabels: serveSvc.Spec.Selector}, cache.Spec.Template.Labels) {
		t.Errorf("Service ingest-cache selects %v, ingest-serve %v: want each its own pods", cacheSvc.Spec.Selector, serveSvc.Spec.Selector)
	}
	if !hasPort(c, cacheSvc.Spec.Ports[0].TargetPort) {
		t.Errorf("Service ingest-cache targets %s, which the cache's container does not declare", cacheSvc.Spec.Ports[0].TargetPort.String())
	}

	// serve purges the cache's Service, and trusts the network the purge
	// ACL lets purge, from which the cache's own asks come.
	purge, err := url.Parse(flagValue(sc.Args, "--purge-url"))
	if err != nil || purge.Hostname() != cacheSvc.Name || purge.Port() != strconv.Itoa(int(cacheSvc.Spec.Ports[0].Port)) {
		t.Errorf("ingest-serve: --purge-url %q, want the cache's Service http://%s:%d/", flagValue(sc.Args, "--purge-url"), cacheSvc.Name, cacheSvc.Spec.Ports[0].Port)
	}
	acl := aclOf(t, backends, "ingest_purgers")
	trusted := flagValue(sc.Args, "--trusted-proxies")
	if len(acl) == 0 || !slices.Contains(strings.Split(trusted, ","), acl[0]) {
		t.Errorf("ingest-serve: --trusted-proxies %q; want the pod network of the purge ACL %v", trusted, acl)
	}
	// The Ingress controller's pods, in that network, name the reader.
	if front := aclOf(t, backends, "ingest_front_proxies"); !slices.Equal(front, acl) {
		t.Errorf("backends.vcl: ingest_front_proxies %v; want the pod network of the purge ACL %v", front, acl)
	}

	compileVCL(t, cm.Data, host)
}

// vclField is the first `.name = "value"` of vcl.
func vclField(t *testing.T, vcl, name string) string {
	t.Helper()
	m := regexp.MustCompile(`\.` + name + `\s*=\s*"([^"]*)"`).FindStringSubmatch(vcl)
	if m == nil {
		t.Fatalf("backends.vcl: no .%s", name)
	}
	return m[1]
}

// aclOf is the networks of the ACL name but localhost, as CIDRs.
func aclOf(t *testing.T, vcl, name string) []string {
	t.Helper()
	body := regexp.MustCompile(`(?s)acl ` + name + ` \{(.*?)\}`).FindStringSubmatch(vcl)
	if body == nil {
		t.Fatalf("backends.vcl: no acl %s", name)
	}
	var out []string
	for _, e := range regexp.MustCompile(`"([^"]+)"\s*/\s*([0-9]+)`).FindAllStringSubmatch(body[1], -1) {
		if _, n, err := net.ParseCIDR(e[1] + "/" + e[2]); err == nil {
			out = append(out, n.String())
		}
	}
	return out
}

// flagValue is the argument after name in args.
func flagValue(args []string, name string) string {
	if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// compileVCL compiles the ConfigMap's files with varnishd -C, the
// origin's name (the cluster's DNS answers it, this host's does not) put
// as localhost: Varnish resolves a backend's host as it compiles; -j none,
// this test's own user, which can read its files.
func compileVCL(t *testing.T, files map[string]string, host string) {
	t.Helper()
	varnishd, err := exec.LookPath("varnishd")
	if err != nil {
		if varnishd, err = exec.LookPath("/usr/sbin/varnishd"); err != nil {
			t.Skip("varnishd is not installed (Debian's varnish and varnish-modules): the cache's VCL is not compiled")
		}
	}
	dir := t.TempDir()
	for name, body := range files {
		if name == "backends.vcl" {
			body = strings.ReplaceAll(body, `"`+host+`"`, `"localhost"`)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(varnishd, "-C", "-j", "none", "-f", filepath.Join(dir, "ingest.vcl"), "-p", "vcl_path="+dir, "-n", filepath.Join(dir, "work")).CombinedOutput()
	if err != nil {
		t.Errorf("varnishd -C on the cache's VCL: %v\n%s", err, out)
	}
}

// TestReadersKubernetesStepsRun runs the steps of docs/operations/readers.md's
// Kubernetes section that need no cluster, as written: the render, and the
// check that the cache's VCL compiles.
func TestReadersKubernetesStepsRun(t *testing.T) {
	const page = "../docs/operations/readers.md"
	doc, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile(`(?s)## Kubernetes: the cache before serve's replicas\n(.*?)\n## `).FindSubmatch(doc)
	if section == nil {
		t.Fatalf("%s: no section \"Kubernetes: the cache before serve's replicas\"", page)
	}
	step := func(n int) string {
		m := regexp.MustCompile(`(?s)\n` + strconv.Itoa(n) + `\. .*?\n\n((?:       [^\n]*\n)+)`).FindSubmatch(section[1])
		if m == nil {
			t.Fatalf("%s: step %d has no commands", page, n)
		}
		return string(m[1])
	}
	if _, err := exec.LookPath("kubectl"); err == nil {
		render := strings.TrimSuffix(strings.TrimSpace(step(2)), " | less")
		cmd := exec.Command("bash", "-euc", render+" >/dev/null")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("step 2, %s: %v\n%s", render, err, out)
		}
	}
	if _, err := exec.LookPath("varnishd"); err != nil {
		t.Skip("varnishd is not installed (Debian's varnish and varnish-modules): step 3 is not run")
	}
	cmd := exec.Command("bash", "-euc", step(3))
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir()) // mktemp's directory goes with the test
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "compiles" {
		t.Errorf("step 3: %v\n%s", err, out)
	}
}
