// What an Image Factory serves, read over HTTPS before a rollout writes
// anything: its list of Talos releases (GET <factory>/versions), and whether
// an image URL is there (HEAD, or a GET of its first bytes where HEAD is
// refused). Both are reads, bounded in size and time, trusting the CA the
// pools import with besides the system's roots, as CDI's importer does.

package rollout

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// FactoryReader reads an Image Factory over HTTPS. The zero value is ready:
// the system's roots and the CA given, 20 s a request.
type FactoryReader struct {
	// Transport makes the round tripper for a factory served by caPEM's CA
	// (besides the system's roots); nil: FactoryTransport. Tests give one
	// that reaches a stand-in.
	Transport func(caPEM string) (http.RoundTripper, error)
	// Timeout bounds each request, redirects and body included.
	Timeout time.Duration
}

// Bounds on what is read of a factory: its version list is a few KB (one
// short string a release); an image's first bytes prove it is there.
const (
	factoryVersionsMaxBytes = 1 << 20
	factoryProbeBytes       = 512
	factoryTimeout          = 20 * time.Second
)

// FactoryTransport is a transport trusting the system's roots and, when
// given, caPEM's certificates (what CDI's importer adds for certConfigMap).
func FactoryTransport(caPEM string) (http.RoundTripper, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if caPEM != "" {
		roots, err := x509.SystemCertPool()
		if err != nil || roots == nil {
			roots = x509.NewCertPool()
		}
		if !roots.AppendCertsFromPEM([]byte(caPEM)) {
			return nil, fmt.Errorf("the CA holds no PEM certificate")
		}
		t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return t, nil
}

func (r FactoryReader) client(caPEM string) (*http.Client, error) {
	make := r.Transport
	if make == nil {
		make = FactoryTransport
	}
	rt, err := make(caPEM)
	if err != nil {
		return nil, err
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = factoryTimeout
	}
	return &http.Client{Transport: rt, Timeout: timeout}, nil
}

// VersionsURL is where a factory lists its Talos releases.
func VersionsURL(factory string) string { return strings.TrimRight(factory, "/") + "/versions" }

// Versions is the factory's list of Talos releases: GET <factory>/versions,
// a JSON array of strings, at most 1 MiB.
func (r FactoryReader) Versions(ctx context.Context, factory, caPEM string) ([]string, error) {
	c, err := r.client(caPEM)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, VersionsURL(factory), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, factoryVersionsMaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > factoryVersionsMaxBytes {
		return nil, fmt.Errorf("the list is larger than %d bytes, more than an Image Factory's", factoryVersionsMaxBytes)
	}
	var versions []string
	if err := json.Unmarshal(body, &versions); err != nil {
		return nil, fmt.Errorf("not a JSON array of strings (an Image Factory's version list): %v", err)
	}
	return versions, nil
}

// ImageThere asks whether the factory serves url: HEAD, or where HEAD is
// refused (405, 501) a GET of its first bytes. It says the status seen and
// how it asked; ok when the image is there (2xx).
func (r FactoryReader) ImageThere(ctx context.Context, url, caPEM string) (ok bool, status string, err error) {
	c, err := r.client(caPEM)
	if err != nil {
		return false, "", err
	}
	ask := func(method string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, method, url, nil)
		if err != nil {
			return nil, err
		}
		if method == http.MethodGet {
			req.Header.Set("Range", fmt.Sprintf("bytes=0-%d", factoryProbeBytes-1))
		}
		return c.Do(req)
	}
	resp, err := ask(http.MethodHead)
	if err != nil {
		return false, "", err
	}
	resp.Body.Close()
	method := "HEAD"
	if resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotImplemented {
		if resp, err = ask(http.MethodGet); err != nil {
			return false, "", err
		}
		// The first bytes only, whatever the server sends.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, factoryProbeBytes))
		resp.Body.Close()
		method = "GET of its first bytes"
	}
	status = method + ": " + resp.Status
	return resp.StatusCode >= 200 && resp.StatusCode < 300, status, nil
}

// CheckWaveImages asks, before a wave's first patch, whether the factory
// serves each distinct image its moving pools' new workers import, trusting
// the CA each import trusts: a 404 there is a wave that waits out its
// timeout. It says what it asked; an error names the URL and the status.
func CheckWaveImages(ctx context.Context, w RolloutWave, reader *FactoryReader) ([]string, error) {
	if reader == nil {
		reader = &FactoryReader{}
	}
	var asked []string
	seen := map[string]bool{}
	for _, p := range w.Pools {
		if p.State != StateMoves || p.ImageURL == "" || seen[p.ImageURL+"\x00"+p.imageCA] {
			continue
		}
		seen[p.ImageURL+"\x00"+p.imageCA] = true
		ok, status, err := reader.ImageThere(ctx, p.ImageURL, p.imageCA)
		switch {
		case err != nil:
			return asked, fmt.Errorf("wave %d: the image of %s, %s, could not be asked for on its factory: %v; nothing was patched: make the factory reachable from here (its workers import from it), or leave the pool out (--exclude %s)", w.Wave, p.HelmRelease, p.ImageURL, err, p.HelmRelease)
		case !ok:
			return asked, fmt.Errorf("wave %d: the image of %s, %s, is not served by its factory (%s); nothing was patched: its new workers would never boot; check the target release and schematic (workerimage rollout --to-talos, --to-schematic), or leave the pool out (--exclude %s)", w.Wave, p.HelmRelease, p.ImageURL, status, p.HelmRelease)
		}
		asked = append(asked, p.ImageURL+" ("+status+")")
	}
	return asked, nil
}
