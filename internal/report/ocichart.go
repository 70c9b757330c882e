package report

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/registry"
)

// RegistryOptions say how a chart named oci://... is pulled, with the flags
// `helm pull` spells: TLS as Helm takes it, and the credentials `helm registry
// login` stored (Helm's registry config, then Docker's). A pull only reads.
type RegistryOptions struct {
	PlainHTTP             bool
	InsecureSkipTLSVerify bool
	CAFile                string
	CertFile              string
	KeyFile               string
	// RegistryConfig is Helm's credentials file; "" is Helm's own default
	// (HELM_REGISTRY_CONFIG, else registry/config.json in Helm's config home).
	RegistryConfig string
}

// pullTimeout bounds a pull: a chart archive is tens of kilobytes, and a
// registry that stops answering must not hang the check.
const pullTimeout = 2 * time.Minute

// maxChartBytes bounds the chart layer handed to Helm's loader. Helm's client
// has read the layer whole by then (it has no limit of its own, and refuses
// layers that are not a chart's); the bound keeps an archive far larger than
// any chart from being unpacked. The registry is the operator's, named on the
// command line, never a tenant's.
const maxChartBytes = 16 << 20

// ociPrefix is how a chart in an OCI registry is named, as Helm names it.
const ociPrefix = "oci://"

// PullChart pulls the chart at ref (oci://HOST[:PORT]/PATH/NAME, with :TAG or
// @sha256:DIGEST; without either, the newest semantic-version tag, as `helm
// pull` takes it) with Helm's registry client and loads it with Helm's archive
// loader. It returns the chart and the reference with the tag it resolved.
func (o RegistryOptions) PullChart(ref string) (*chart.Chart, string, error) {
	name, ok := strings.CutPrefix(ref, ociPrefix)
	if !ok || name == "" {
		return nil, "", fmt.Errorf("chart %s: not an OCI reference; name a chart in a registry as oci://HOST[:PORT]/PATH/NAME:VERSION", ref)
	}
	client, err := o.client()
	if err != nil {
		return nil, "", fmt.Errorf("chart %s: %v", ref, err)
	}
	if !hasTagOrDigest(name) {
		tags, err := client.Tags(name)
		if err != nil {
			return nil, "", fmt.Errorf("chart %s: listing its tags: %v%s", ref, err, o.hint())
		}
		if len(tags) == 0 {
			return nil, "", fmt.Errorf("chart %s: the registry holds no version of it (no semantic-version tag); push one (make push), or name the version: %s:VERSION", ref, ref)
		}
		// Tags sorts the semantic versions newest first.
		name += ":" + tags[0]
	}
	res, err := client.Pull(name, registry.PullOptWithChart(true))
	if err != nil {
		return nil, "", fmt.Errorf("chart %s%s: %v%s", ociPrefix, name, err, o.hint())
	}
	if res.Chart == nil || len(res.Chart.Data) == 0 {
		return nil, "", fmt.Errorf("chart %s%s: the registry returned no chart layer", ociPrefix, name)
	}
	if len(res.Chart.Data) > maxChartBytes {
		return nil, "", fmt.Errorf("chart %s%s: its chart layer is %d bytes, over the %d a chart archive may have", ociPrefix, name, len(res.Chart.Data), maxChartBytes)
	}
	if err := checkArchive(bytes.NewReader(res.Chart.Data)); err != nil {
		return nil, "", fmt.Errorf("chart %s%s: %v", ociPrefix, name, err)
	}
	c, err := loader.LoadArchive(bytes.NewReader(res.Chart.Data))
	if err != nil {
		return nil, "", fmt.Errorf("chart %s%s: not a chart archive as helm package builds it: %v", ociPrefix, name, err)
	}
	return c, ociPrefix + name, nil
}

// hasTagOrDigest: the reference names a version (the part after the last /
// holds a colon) or a digest.
func hasTagOrDigest(name string) bool {
	if strings.Contains(name, "@") {
		return true
	}
	last := name[strings.LastIndex(name, "/")+1:]
	return strings.Contains(last, ":")
}

// hint is the flag to try when a pull failed for want of one.
func (o RegistryOptions) hint() string {
	if o.PlainHTTP {
		return ""
	}
	if o.CAFile != "" {
		return " (a registry served over plain HTTP needs --plain-http; a private one, helm registry login first)"
	}
	return " (a registry served over plain HTTP needs --plain-http; one whose certificate your own CA signed, --ca-file with that CA; a private one, helm registry login first)"
}

// client is Helm's registry client with these options and a bounded HTTP
// client.
func (o RegistryOptions) client() (*registry.Client, error) {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if o.CAFile != "" || o.CertFile != "" || o.KeyFile != "" || o.InsecureSkipTLSVerify {
		conf, err := o.tlsConfig()
		if err != nil {
			return nil, err
		}
		transport.TLSClientConfig = conf
	}
	opts := []registry.ClientOption{
		registry.ClientOptEnableCache(true),
		registry.ClientOptHTTPClient(&http.Client{Transport: transport, Timeout: pullTimeout}),
	}
	config := o.RegistryConfig
	if config == "" {
		config = os.Getenv("HELM_REGISTRY_CONFIG")
	}
	if config != "" {
		opts = append(opts, registry.ClientOptCredentialsFile(config))
	}
	if o.PlainHTTP {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	return registry.NewClient(opts...)
}

// tlsConfig is the TLS a pull uses: the CA file added to the system's roots,
// a client certificate, or no verification, as Helm's flags of those names.
func (o RegistryOptions) tlsConfig() (*tls.Config, error) {
	conf := &tls.Config{InsecureSkipVerify: o.InsecureSkipTLSVerify} // #nosec G402 -- the operator asked for it by flag
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, errors.New("--cert-file and --key-file go together: give both, or neither")
	}
	if o.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("--cert-file/--key-file: %v", err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %v", WithoutPath(err))
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file %s holds no PEM certificate", o.CAFile)
		}
		conf.RootCAs = pool
	}
	return conf, nil
}
