package support

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"

	"github.com/cozystack/golden-worker-images/internal/render"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
)

// HelmV41Tool is the make target (and .cache folder) of tools/helm-v4.1, and
// HelmV41Env the variable that names its binary elsewhere.
const (
	HelmV41Tool = "helm-v4.1"
	HelmV41Env  = "HELM_V4_1"
)

// HelmV41 renders through tools/helm-v4.1, Helm v4.1 (Cozystack's
// helm-controller v1.5.0's) in a process of its own: one module holds one
// Helm v4, and go.mod's is the newest (package helmv4). Renders run one at a
// time; a lookup is asked back over the pipe and answered by the render's
// own cluster, whatever it is.
type HelmV41 struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	enc    *gob.Encoder
	dec    *gob.Decoder
	stderr bytes.Buffer
}

// StartHelmV41 starts the binary at path (support.Tool finds it).
func StartHelmV41(path string) (*HelmV41, error) {
	h := &HelmV41{cmd: exec.Command(path)}
	h.cmd.Stderr = &h.stderr
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := h.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := h.cmd.Start(); err != nil {
		return nil, err
	}
	h.enc, h.dec = gob.NewEncoder(h.stdin), gob.NewDecoder(stdout)
	return h, nil
}

// Close ends the process.
func (h *HelmV41) Close() error {
	h.stdin.Close()
	return h.cmd.Wait()
}

// Render is render.Render under Helm v4.1 (a support.Renderer): the values
// bound first, as render.Render has it, then Helm v4.1's own loading of
// the chart's files, values, schema check and engine.
func (h *HelmV41) Render(chrt *chart.Chart, opts render.Options) (*render.Manifest, error) {
	if err := render.CheckValues(opts.Values); err != nil {
		return nil, err
	}
	req := v41Request{
		Name: opts.Release.Name, Namespace: opts.Release.Namespace, Upgrade: opts.Release.Upgrade,
		SkipSchemaValidation: opts.Release.SkipSchemaValidation, APIVersions: opts.APIVersions,
		Values: opts.Values,
	}
	for _, f := range render.ChartFiles(chrt) {
		req.Files = append(req.Files, v41File{Name: f.Name, Data: f.Data})
	}
	p := opts.Provider()
	req.Cluster = p != nil
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.enc.Encode(req); err != nil {
		return nil, h.broken(err)
	}
	clients := map[string]dynamic.NamespaceableResourceInterface{}
	for {
		var msg v41Message
		if err := h.dec.Decode(&msg); err != nil {
			return nil, h.broken(err)
		}
		if msg.Result != nil {
			if msg.Result.Err != "" {
				return nil, errors.New(msg.Result.Err)
			}
			return render.NewManifest(msg.Result.Files)
		}
		if msg.Lookup == nil || p == nil {
			return nil, h.broken(fmt.Errorf("a lookup message without a lookup or a cluster: %+v", msg))
		}
		if err := h.enc.Encode(answer(p, clients, *msg.Lookup)); err != nil {
			return nil, h.broken(err)
		}
	}
}

func (h *HelmV41) broken(err error) error {
	return fmt.Errorf("helm-v4.1: %w (its standard error: %s)", err, h.stderr.String())
}

// answer asks p what Helm's lookup asked the tool's provider: the client for
// a kind (kept for the get or list that follows), then a get or a list.
func answer(p engine.ClientProvider, clients map[string]dynamic.NamespaceableResourceInterface, l v41Lookup) v41Answer {
	key := l.APIVersion + " " + l.Kind
	if l.Op == "client" {
		c, namespaced, err := p.GetClientFor(l.APIVersion, l.Kind)
		clients[key] = c
		return v41Answer{Namespaced: namespaced, Err: v41ErrorOf(err)}
	}
	var r dynamic.ResourceInterface = clients[key]
	if l.Namespace != "" {
		r = clients[key].Namespace(l.Namespace)
	}
	if l.Op == "get" {
		u, err := r.Get(context.Background(), l.Name, metav1.GetOptions{})
		if err != nil {
			return v41Answer{Err: v41ErrorOf(err)}
		}
		return v41Answer{Object: u.Object}
	}
	list, err := r.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return v41Answer{Err: v41ErrorOf(err)}
	}
	return v41Answer{Object: list.UnstructuredContent()}
}

// The protocol of tools/helm-v4.1 (its main.go holds the same types).
type v41Request struct {
	Files                []v41File
	Values               map[string]interface{}
	Name, Namespace      string
	Upgrade              bool
	SkipSchemaValidation bool
	APIVersions          []string
	Cluster              bool
}

type v41File struct {
	Name string
	Data []byte
}

type v41Message struct {
	Lookup *v41Lookup
	Result *v41Result
}

type v41Lookup struct {
	Op, APIVersion, Kind, Namespace, Name string
}

type v41Answer struct {
	Namespaced bool
	Object     map[string]interface{}
	Err        *v41Error
}

type v41Result struct {
	Files map[string]string
	Err   string
}

// v41Error is an error's text and the API status it holds, if any, so the
// tool's NotFound is still NotFound to Helm's lookup.
type v41Error struct {
	Message string
	Status  *metav1.Status
}

func v41ErrorOf(err error) *v41Error {
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		return &v41Error{Message: err.Error(), Status: &s}
	}
	return &v41Error{Message: err.Error()}
}

func init() {
	gob.Register(map[string]interface{}{})
	gob.Register([]interface{}{})
}
