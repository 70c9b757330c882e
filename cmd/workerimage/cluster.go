package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"strings"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// target is where a render's lookups go: a cluster-state file, a live cluster,
// or nothing at all (helm template: every lookup answers empty).
type target struct {
	provider engine.ClientProvider
	desc     string
	// apiVersions are what the cluster serves of the API versions the charts
	// ask .Capabilities about, so a render sees what `helm install` would.
	apiVersions []string
}

// servedAPIVersions asks a provider that can tell (a live cluster, a state file).
func servedAPIVersions(p engine.ClientProvider) ([]string, error) {
	if s, ok := p.(interface{ APIVersions() ([]string, error) }); ok {
		return s.APIVersions()
	}
	return nil, nil
}

// kubeAccess is how a command reaches a live cluster, as kubectl does:
// -kubeconfig (one file) else KUBECONFIG (a list of files) else
// ~/.kube/config, -context else the current context, and in a pod with none
// of them, its service account (in-cluster config).
type kubeAccess struct {
	kubeconfig, context string
}

// given: the operator named a kubeconfig or a context.
func (k kubeAccess) given() bool { return k.kubeconfig != "" || k.context != "" }

// clusterFlags adds -cluster, -kubeconfig and -context to a command's flags.
func clusterFlags(fs *flag.FlagSet, kubeconfigHelp string) (state *string, k *kubeAccess) {
	k = &kubeAccess{}
	state = fs.String("cluster", "", "cluster state file (multi-document YAML)")
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", kubeconfigHelp)
	fs.StringVar(&k.context, "context", "", "kubeconfig context to use (default: its current context)")
	return state, k
}

// connect picks the cluster: a state file, else a live cluster when a
// kubeconfig or context is given, else, for a command that needs a cluster
// (required), kubectl's defaults (KUBECONFIG, ~/.kube/config, in-cluster).
// plan and rollcheck without either render a preview: they never reach a
// cluster the operator did not name.
func (a app) connect(stateFile string, k kubeAccess, required bool) (target, error) {
	switch {
	case stateFile != "" && k.given():
		return target{}, problemf("-cluster and -kubeconfig/-context are exclusive: give one")
	case stateFile != "":
		c, err := render.LoadState(stateFile)
		if err != nil {
			return target{}, problemf("cluster state %s: %v", stateFile, err)
		}
		served, _ := c.APIVersions()
		return target{provider: c, desc: "state file " + stateFile, apiVersions: served}, nil
	case k.given() || required:
		p, desc, err := a.dial(k)
		if err != nil {
			return target{}, err
		}
		served, err := servedAPIVersions(p)
		if err != nil {
			return target{}, problemf("%s: %v", desc, err)
		}
		return target{provider: p, desc: desc, apiVersions: served}, nil
	}
	return target{desc: "none (helm template preview: every lookup answers empty)"}, nil
}

func (t target) options(rel render.Release, values map[string]interface{}) render.Options {
	return render.Options{Release: rel, Values: values, Cluster: t.provider, APIVersions: t.apiVersions}
}

// list reads every object of a kind, in every namespace or in one.
func (t target) list(apiVersion, kind, namespace string) ([]unstructured.Unstructured, error) {
	c, namespaced, err := t.provider.GetClientFor(apiVersion, kind)
	if err != nil {
		return nil, problemf("listing %s %s: %v", kind, apiVersion, err)
	}
	var r dynamic.ResourceInterface = c
	if namespaced && namespace != "" {
		r = c.Namespace(namespace)
	}
	l, err := r.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, problemf("listing %s %s: %v", kind, apiVersion, err)
	}
	return l.Items, nil
}

// get reads one object; nil, without error, when the kind is not served or
// the object does not exist.
func (t target) get(apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	c, namespaced, err := t.provider.GetClientFor(apiVersion, kind)
	if errors.Is(err, render.ErrKindNotServed) {
		return nil, nil
	}
	if err != nil {
		return nil, problemf("reading %s %s: %v", kind, apiVersion, err)
	}
	var r dynamic.ResourceInterface = c
	if namespaced {
		r = c.Namespace(namespace)
	}
	obj, err := r.Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, problemf("reading %s %s: %v", kind, name, err)
	}
	return obj, nil
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
			return nil, "", problemf("kubeconfig %s: %v", k.kubeconfig, unwrapPath(err))
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
			return nil, "", problemf("give the cluster: -cluster STATE.yaml, -kubeconfig PATH, or a kubeconfig in KUBECONFIG or ~/.kube/config (in a pod, its service account)")
		}
	}
	cfg, err := loader.ClientConfig()
	if k.context != "" {
		desc += " context " + k.context
	}
	if err != nil {
		return nil, "", problemf("%s: %v", desc, err)
	}
	p, err := render.NewLive(cfg)
	if err != nil {
		return nil, "", problemf("%s: %v", desc, err)
	}
	if err := p.Ping(); err != nil {
		return nil, "", problemf("cannot reach the cluster at %s (%s): %v", cfg.Host, desc, err)
	}
	return p, desc, nil
}

// inCluster: running in a pod with a service account, as client-go judges it.
func inCluster() bool {
	_, err := rest.InClusterConfig()
	return err == nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
