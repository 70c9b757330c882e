package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/output"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/internal/report"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// servedAPIVersions asks a provider that can tell (a live cluster, a state file).
func servedAPIVersions(p engine.ClientProvider) ([]string, error) {
	if s, ok := p.(interface{ APIVersions() ([]string, error) }); ok {
		return s.APIVersions()
	}
	return nil, nil
}

// noCluster is --cluster's value for no cluster at all: a preview, as helm
// template renders (every lookup answers empty).
const noCluster = "none"

// preview is the target of a render without a cluster.
func preview(why string) report.Target {
	return report.Target{Desc: "none (" + why + "helm template preview: every lookup answers empty)"}
}

// connect picks the cluster, alike for every verb: a state file
// (--cluster STATE.yaml), none (--cluster none: a preview), else the cluster
// kubectl reaches with the same flags and environment (--kubeconfig,
// --context, KUBECONFIG, ~/.kube/config, in a pod its service account). A
// verb that can answer without a cluster (required false: plan, rollcheck
// --base) previews when none of those is there at all, and says so; the
// others refuse.
func (a *app) connect(c clusterFlags, required bool) (report.Target, error) {
	stateFile, k := c.state, c.kube
	switch {
	case stateFile != "" && k.given():
		return report.Target{}, fmt.Errorf("--cluster and --kubeconfig/--context are exclusive: give one")
	case stateFile == noCluster && required:
		return report.Target{}, fmt.Errorf("--cluster %s previews without a cluster, and this command reads one: give --cluster STATE.yaml, --kubeconfig PATH or --context NAME (a state file named %s: --cluster ./%s)", noCluster, noCluster, noCluster)
	case stateFile == noCluster:
		return preview(""), nil
	case stateFile != "":
		st, err := render.LoadState(stateFile)
		if err != nil {
			return report.Target{}, fmt.Errorf("cluster state %s: %v", stateFile, err)
		}
		served, _ := st.APIVersions()
		return report.Target{Provider: st, Desc: "state file " + stateFile, APIVersions: served, Progress: a.progress()}, nil
	case k.given() || required || kubeconfigFound():
		p, desc, err := a.dial(k)
		if err != nil {
			return report.Target{}, err
		}
		served, err := servedAPIVersions(p)
		if err != nil {
			return report.Target{}, fmt.Errorf("%s: %v", desc, err)
		}
		return report.Target{Provider: p, Desc: desc, APIVersions: served, Progress: a.progress()}, nil
	}
	return preview("no kubeconfig in KUBECONFIG or ~/.kube/config, not in a pod: "), nil
}

// kubeconfigFound: kubectl would find a cluster without flags: KUBECONFIG is
// set, ~/.kube/config exists, or this runs in a pod with a service account.
func kubeconfigFound() bool {
	if os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "" {
		return true
	}
	if _, err := os.Stat(clientcmd.RecommendedHomeFile); err == nil {
		return true
	}
	return inCluster()
}

// dialKubeconfig connects to the cluster kubectl would reach with the same
// flags and environment (k8s.io/cli-runtime's ConfigFlags) and checks that it
// answers, so an unreachable cluster is one line before anything renders.
// desc names where the config came from, for the report's first line.
func dialKubeconfig(k kubeAccess) (engine.ClientProvider, string, error) {
	flags := genericclioptions.NewConfigFlags(false)
	desc := ""
	if k.kubeconfig != "" {
		if _, err := os.Stat(k.kubeconfig); err != nil {
			return nil, "", fmt.Errorf("kubeconfig %s: %v", k.kubeconfig, report.WithoutPath(err))
		}
		flags.KubeConfig = &k.kubeconfig
		desc = "kubeconfig " + k.kubeconfig
	}
	if k.context != "" {
		flags.Context = &k.context
	}
	loader := flags.ToRawKubeConfigLoader()
	if desc == "" {
		// With no kubeconfig at all, kubectl's loader falls back to the pod's
		// service account, else to localhost:8080; the latter is never what
		// an operator meant, so it is refused as a missing cluster.
		raw, err := loader.RawConfig()
		switch {
		case err == nil && len(raw.Contexts) > 0:
			desc = "kubeconfig " + strings.Join(loader.ConfigAccess().GetLoadingPrecedence(), string(os.PathListSeparator))
		case inCluster():
			desc = "in-cluster config (service account)"
		default:
			return nil, "", fmt.Errorf("give the cluster: --cluster STATE.yaml, --kubeconfig PATH, or a kubeconfig in KUBECONFIG or ~/.kube/config (in a pod, its service account)")
		}
	}
	cfg, err := loader.ClientConfig()
	if k.context != "" {
		desc += " context " + k.context
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", desc, err)
	}
	p, err := render.NewLive(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %v", desc, err)
	}
	if err := p.Ping(); err != nil {
		return nil, "", fmt.Errorf("cannot reach the cluster at %s (%s): %v", cfg.Host, desc, err)
	}
	return p, desc, nil
}

// inCluster: running in a pod with a service account, as client-go judges it.
func inCluster() bool {
	_, err := rest.InClusterConfig()
	return err == nil
}

// progress is what a long read of the cluster reports, one line at a time
// on stderr, each over the last: only when stderr is a terminal, never on a
// pipe or into a file, where it would be noise in a log.
func (a *app) progress() func(string) {
	width, ok := a.terminal(a.stderr)
	if !ok {
		return nil
	}
	return func(step string) {
		line := output.TermSafe(a.name + ": " + step)
		if r := []rune(line); width > 1 && len(r) >= width {
			line = string(r[:width-1])
		}
		fmt.Fprint(a.stderr, "\r\x1b[K"+line)
		a.progressShown = true
	}
}

// clearProgress erases the last progress line, before the result or the
// one line of a problem.
func (a *app) clearProgress() {
	if a.progressShown {
		fmt.Fprint(a.stderr, "\r\x1b[K")
		a.progressShown = false
	}
}
