package syncbench

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stackdome/stackdome/internal/loopback"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// chartEnv is the environment the chart's default values give stackdome's
// container, read from chart/values.yaml as the kubelet resolves the
// chart's resourceFieldRefs (divisor 1): GOMAXPROCS from the CPU request
// rounded up to a whole core, GOMEMLIMIT from the memory limit in bytes.
func chartEnv(tb testing.TB) []string {
	b, err := os.ReadFile("../../chart/values.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	var v struct {
		Resources struct {
			Requests struct {
				CPU resource.Quantity `json:"cpu"`
			} `json:"requests"`
			Limits struct {
				Memory resource.Quantity `json:"memory"`
			} `json:"limits"`
		} `json:"resources"`
	}
	if err := yaml.Unmarshal(b, &v); err != nil {
		tb.Fatalf("chart/values.yaml: %v", err)
	}
	cpu := (v.Resources.Requests.CPU.MilliValue() + 999) / 1000
	mem := v.Resources.Limits.Memory.Value()
	if cpu < 1 || mem < 1 {
		tb.Fatalf("chart/values.yaml: resources.requests.cpu %s, resources.limits.memory %s", &v.Resources.Requests.CPU, &v.Resources.Limits.Memory)
	}
	return []string{fmt.Sprintf("GOMAXPROCS=%d", cpu), fmt.Sprintf("GOMEMLIMIT=%d", mem)}
}

// processApps and processRate are the load of BenchmarkFleetProcess: the
// fleet's 200 apps, half private and half public, and about the pace at
// which one of the chart's two replicas answered them in the fleet run
// (1,717 syncs in 49 s over both, raised limits).
const (
	processApps    = 200
	processRate    = 40 // syncs a second
	processWorkers = 5  // Metacontroller's --workers default
)

// BenchmarkFleetProcess is the whole stackdome process per sync at the
// fleet's request shapes: the real binary (`stackdome serve`, in the
// chart's environment: chartEnv), its real
// verifier holding its own Open verdict on each app's pod (a loopback
// listener per app and port), fed the 200 apps of the fleet in turn, paced
// at processRate by processWorkers clients with http.DefaultTransport's
// connection reuse (MaxIdleConnsPerHost 2: Metacontroller's hook client), so
// that a sync finds caches as cold as a replica's do between syncs, not as a
// hot loop leaves them. Each answer is the request's own status (checked
// for every app first). It reports cpu-us/sync, the process's user and
// system CPU (/proc/<pid>/stat) per sync, the kernel's network work for
// the connections included, which BenchmarkFleet (the handler alone, hot)
// leaves out; user-us/sync and sys-us/sync split it; idle-cpu-us/s is the
// process's CPU per second with nothing to serve. SYNCBENCH_CPUPROFILE=<file>
// writes the process's CPU profile of the first three rounds there
// (--pprof-listen).
func BenchmarkFleetProcess(b *testing.B) {
	ports := freePorts(b, 2)
	bodies := make([][]byte, processApps) // even apps private, odd ones public
	for _, public := range []bool{false, true} {
		pods := 1
		if public {
			pods = 2
		}
		p, err := BuildShape(fixture, Shape{Pods: pods, Ports: ports, Public: public}, Verified)
		if err != nil {
			b.Fatal(err)
		}
		for i := range processApps {
			if (i%2 == 1) == public {
				bodies[i] = p.For(i)
			}
		}
	}
	for i := range processApps {
		// The pod dialed is the first one: 127.<1+i/256>.<i%256>.1 (Payload.For).
		for _, port := range ports {
			ln, err := net.Listen("tcp", net.JoinHostPort(fmt.Sprintf("127.%d.%d.1", 1+i/256, i%256), strconv.Itoa(int(port))))
			if err != nil {
				b.Fatal(err)
			}
			loopback.Serve(b, ln)
		}
	}
	bin := filepath.Join(b.TempDir(), "stackdome")
	build := exec.Command("go", "build", "-o", bin, "github.com/stackdome/stackdome")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		b.Fatalf("building stackdome: %v", err)
	}
	args := []string{"--dial-allow", "127.0.0.0/8", "--dial-allow-loopback"}
	profile := os.Getenv("SYNCBENCH_CPUPROFILE")
	var pprofAddr string
	if profile != "" {
		pprofAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(int(freePorts(b, 1)[0])))
		args = append(args, "--pprof-listen", pprofAddr)
	}
	proc, hooksAddr, _ := startBinaryEnv(b, chartEnv(b), bin, args...)
	url := "http://" + hooksAddr + "/sync"
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2, DisableCompression: true}}

	// Every app at its fixpoint: the first syncs dial its pod, then the
	// answer is the request's own status.
	for _, body := range bodies {
		p := Payload{View: Verified}
		settle(b, p, body, func() ([]byte, error) { return post(c, url, body) })
	}

	idle0, t0 := procTimes(b, proc.Pid), time.Now()
	time.Sleep(time.Second)
	idle1, t1 := procTimes(b, proc.Pid), time.Now()
	idle := float64((idle1.user + idle1.sys - idle0.user - idle0.sys).Microseconds()) / t1.Sub(t0).Seconds()

	n := 0
	var cpu, user, sys time.Duration
	if profile != "" {
		// The process's CPU profile over the first rounds.
		done := make(chan struct{})
		go func() {
			defer close(done)
			secs := processApps / processRate * 3
			resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, secs))
			if err != nil {
				b.Error(err)
				return
			}
			defer resp.Body.Close()
			f, err := os.Create(profile)
			if err != nil {
				b.Error(err)
				return
			}
			defer f.Close()
			io.Copy(f, resp.Body)
		}()
		b.Cleanup(func() { <-done })
	}
	for b.Loop() {
		start := procTimes(b, proc.Pid)
		pace(b, processWorkers, processRate, len(bodies), func(i int) error {
			_, err := post(c, url, bodies[i])
			return err
		})
		end := procTimes(b, proc.Pid)
		user += end.user - start.user
		sys += end.sys - start.sys
		cpu += end.user + end.sys - start.user - start.sys
		n += len(bodies)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(n), "cpu-us/sync")
	b.ReportMetric(float64(user.Microseconds())/float64(n), "user-us/sync")
	b.ReportMetric(float64(sys.Microseconds())/float64(n), "sys-us/sync")
	b.ReportMetric(idle, "idle-cpu-us/s")
	proc.Signal(syscall.SIGTERM)
	proc.Wait()
}

// pace calls send(0…n-1) from workers goroutines, the i-th no sooner than
// i/rate seconds after the start, and fails b on the first error.
func pace(b *testing.B, workers, rate, n int, send func(i int) error) {
	start := time.Now()
	next := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := send(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))))
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
}

// cpuTimes are a process's user and system CPU.
type cpuTimes struct{ user, sys time.Duration }

// procTimes reads pid's utime and stime from /proc/<pid>/stat.
func procTimes(tb testing.TB, pid int) cpuTimes {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	// The fields after the command name, which may hold spaces.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	tick := func(s string) time.Duration {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			tb.Fatal(err)
		}
		return time.Duration(v) * time.Second / 100 // USER_HZ
	}
	return cpuTimes{user: tick(f[11]), sys: tick(f[12])}
}

// freePorts returns n port numbers free on 127.0.0.1 when asked.
func freePorts(tb testing.TB, n int) []int32 {
	var out []int32
	for range n {
		port, err := loopback.Refusing("127.0.0.1")
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, port)
	}
	return out
}
