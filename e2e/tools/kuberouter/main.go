// Command kube-router is kube-router v2.1.0's network policy controller and
// nothing else: its own flags (pkg/options), health server
// (pkg/healthcheck) and controller (pkg/controllers/netpol), started as its
// pkg/cmd.KubeRouter.Run starts them under --run-firewall with neither
// --run-router nor --run-service-proxy, which is how the e2e node runs it.
// kube-router's own main also links its BGP router (gobgp) and IPVS service
// proxy, which the node never runs and which made it the slowest build of
// a cold e2e run.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/cloudnativelabs/kube-router/v2/pkg/controllers/netpol"
	"github.com/cloudnativelabs/kube-router/v2/pkg/healthcheck"
	"github.com/cloudnativelabs/kube-router/v2/pkg/options"
	"github.com/spf13/pflag"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "%s\n", err)
		os.Exit(1)
	}
}

func run() error {
	klog.InitFlags(nil)
	config := options.NewKubeRouterConfig()
	config.AddFlags(pflag.CommandLine)
	pflag.Parse()
	if err := flag.CommandLine.Parse([]string{}); err != nil {
		return fmt.Errorf("failed to parse flags: %w", err)
	}
	if err := flag.Set("logtostderr", "true"); err != nil {
		return err
	}
	if err := flag.Set("v", config.VLevel); err != nil {
		return err
	}
	if !config.RunFirewall || config.RunRouter || config.RunServiceProxy || config.RunLoadBalancer {
		return errors.New("this kube-router runs the network policy controller only: --run-firewall=true --run-router=false --run-service-proxy=false")
	}
	clientConfig, err := clientcmd.BuildConfigFromFlags(config.Master, config.Kubeconfig)
	if err != nil {
		return fmt.Errorf("failed to build configuration from CLI: %w", err)
	}
	client, err := kubernetes.NewForConfig(clientConfig)
	if err != nil {
		return fmt.Errorf("failed to create Kubernetes client: %w", err)
	}

	var ipsetMutex sync.Mutex
	var wg sync.WaitGroup
	healthChan := make(chan *healthcheck.ControllerHeartbeat, 10)
	stopCh := make(chan struct{})
	hc, err := healthcheck.NewHealthController(config)
	if err != nil {
		return fmt.Errorf("failed to create health controller: %w", err)
	}
	wg.Add(1)
	go hc.RunServer(stopCh, &wg)

	factory := informers.NewSharedInformerFactory(client, 0)
	podInformer := factory.Core().V1().Pods().Informer()
	nsInformer := factory.Core().V1().Namespaces().Informer()
	npInformer := factory.Networking().V1().NetworkPolicies().Informer()
	factory.Start(stopCh)
	synced := make(chan struct{})
	go func() {
		factory.WaitForCacheSync(stopCh)
		close(synced)
	}()
	select {
	case <-synced:
	case <-time.After(config.CacheSyncTimeout):
		return fmt.Errorf("failed to synchronize cache: %s timeout", config.CacheSyncTimeout)
	}
	hc.SetAlive()
	wg.Add(1)
	go hc.RunCheck(healthChan, stopCh, &wg)

	iptablesCmdHandlers, ipSetHandlers, err := netpol.NewIPTablesHandlers(config)
	if err != nil {
		return fmt.Errorf("failed to create iptables handlers: %w", err)
	}
	npc, err := netpol.NewNetworkPolicyController(client, config, podInformer, npInformer, nsInformer, &ipsetMutex, iptablesCmdHandlers, ipSetHandlers)
	if err != nil {
		return fmt.Errorf("failed to create network policy controller: %w", err)
	}
	if _, err := podInformer.AddEventHandler(npc.PodEventHandler); err != nil {
		return fmt.Errorf("failed to add PodEventHandler: %w", err)
	}
	if _, err := nsInformer.AddEventHandler(npc.NamespaceEventHandler); err != nil {
		return fmt.Errorf("failed to add NamespaceEventHandler: %w", err)
	}
	if _, err := npInformer.AddEventHandler(npc.NetworkPolicyEventHandler); err != nil {
		return fmt.Errorf("failed to add NetworkPolicyEventHandler: %w", err)
	}
	wg.Add(1)
	go npc.Run(healthChan, stopCh, &wg)

	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	<-ch
	klog.Infof("Shutting down the controllers")
	close(stopCh)
	wg.Wait()
	return nil
}
