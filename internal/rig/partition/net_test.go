package partition

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// lab is the test's network: a bridge in a namespace of its own and one
// namespace per node, each joined to the bridge by a veth pair. No
// interface of the machine's is in it and no route leads out.
type lab struct {
	t      *testing.T
	prefix string // every namespace and link the test makes starts with it
	subnet string // 10.79.N.
	nodes  map[string]string
}

// newLab makes the bridge, or skips the test saying why this machine
// cannot: network namespaces need root (CAP_SYS_ADMIN and CAP_NET_ADMIN).
func newLab(t *testing.T, n int) *lab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("partition: network namespaces need root (CAP_SYS_ADMIN, CAP_NET_ADMIN); not root here")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("partition: iproute2's ip is not installed")
	}
	l := &lab{t: t, prefix: fmt.Sprintf("p%d", os.Getpid()%100000), subnet: fmt.Sprintf("10.79.%d.", n%250), nodes: map[string]string{}}
	t.Cleanup(l.teardown)
	if out, err := exec.Command("ip", "netns", "add", l.ns("sw")).CombinedOutput(); err != nil {
		t.Skipf("partition: this machine refuses a network namespace: %v: %s", err, out)
	}
	l.must("ip", "-n", l.ns("sw"), "link", "add", "name", "lan", "type", "bridge")
	l.must("ip", "-n", l.ns("sw"), "link", "set", "lan", "up")
	return l
}

func (l *lab) ns(name string) string { return l.prefix + name }

// add makes node's namespace, its veth to the bridge and its address .host.
func (l *lab) add(node string, host int) string {
	ns, ip := l.ns(node), fmt.Sprintf("%s%d", l.subnet, host)
	l.must("ip", "netns", "add", ns)
	l.must("ip", "link", "add", ns+"a", "type", "veth", "peer", "name", ns+"b")
	l.must("ip", "link", "set", ns+"a", "netns", ns)
	l.must("ip", "link", "set", ns+"b", "netns", l.ns("sw"))
	l.must("ip", "-n", l.ns("sw"), "link", "set", ns+"b", "master", "lan", "up")
	l.must("ip", "-n", ns, "addr", "add", ip+"/24", "dev", ns+"a")
	l.must("ip", "-n", ns, "link", "set", ns+"a", "up")
	l.must("ip", "-n", ns, "link", "set", "lo", "up")
	l.nodes[node] = ip
	return ip
}

// cut makes a and b unreachable to each other (a blackhole route each
// way); heal undoes it.
func (l *lab) cut(a, b string) {
	l.must("ip", "-n", l.ns(a), "route", "add", "blackhole", l.nodes[b]+"/32")
	l.must("ip", "-n", l.ns(b), "route", "add", "blackhole", l.nodes[a]+"/32")
}

func (l *lab) heal(a, b string) {
	l.must("ip", "-n", l.ns(a), "route", "del", "blackhole", l.nodes[b]+"/32")
	l.must("ip", "-n", l.ns(b), "route", "del", "blackhole", l.nodes[a]+"/32")
}

// shaper is how this kernel can slow a link: "netem" (delay and random
// loss), "tbf" (a token bucket: a slow link whose queue, past its bound,
// drops packets), or "" when it has neither.
func (l *lab) shaper(node string) string {
	ns := l.ns(node)
	for _, q := range [][]string{{"netem", "delay", "1ms"}, {"tbf", "rate", "1mbit", "burst", "4kb", "latency", "50ms"}} {
		add := append([]string{"ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", ns + "a", "root"}, q...)
		if err := exec.Command(add[0], add[1:]...).Run(); err == nil {
			exec.Command("ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", ns+"a", "root").Run()
			return q[0]
		}
	}
	return ""
}

// delay puts the qdisc spec (its kind first) on node's link, each way:
// on its own end, which its packets leave by, and on the bridge's end,
// which the packets sent to it leave by.
func (l *lab) delay(node, spec string) {
	ns := l.ns(node)
	l.must(append([]string{"ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", ns + "a", "root"}, strings.Fields(spec)...)...)
	l.must(append([]string{"ip", "netns", "exec", l.ns("sw"), "tc", "qdisc", "add", "dev", ns + "b", "root"}, strings.Fields(spec)...)...)
}

func (l *lab) undelay(node string) {
	ns := l.ns(node)
	l.must("ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", ns+"a", "root")
	l.must("ip", "netns", "exec", l.ns("sw"), "tc", "qdisc", "del", "dev", ns+"b", "root")
}

// listen opens a TCP listener at addr inside node's namespace: a thread
// of its own enters the namespace, and the socket stays there.
func (l *lab) listen(node, addr string) (net.Listener, error) {
	type res struct {
		ln  net.Listener
		err error
	}
	ch := make(chan res)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		f, err := os.Open("/var/run/netns/" + l.ns(node))
		if err != nil {
			ch <- res{err: err}
			return
		}
		defer f.Close()
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			ch <- res{err: err}
			return
		}
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- res{err: err}
			return
		}
		ln, err := net.Listen("tcp", addr)
		ch <- res{ln, err}
	}()
	r := <-ch
	return r.ln, r.err
}

// command runs argv inside node's namespace.
func (l *lab) command(node string, argv ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", l.ns(node)}, argv...)...)
}

func (l *lab) must(argv ...string) {
	l.t.Helper()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		l.t.Fatalf("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
}

// teardown deletes every namespace the test made (their links go with
// them), whatever state the test ended in.
func (l *lab) teardown() {
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], l.prefix) {
			// A process still in the namespace (a server or a host a
			// failed test left) is killed first: deleting a namespace
			// ends none of its processes.
			pids, _ := exec.Command("ip", "netns", "pids", f[0]).Output()
			for _, p := range strings.Fields(string(pids)) {
				// The test's own process is among them: the thread that
				// opened the upstream's listener entered its namespace.
				if pid, err := strconv.Atoi(p); err == nil && pid != os.Getpid() {
					syscall.Kill(pid, syscall.SIGCONT)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			exec.Command("ip", "netns", "del", f[0]).Run()
		}
	}
}
