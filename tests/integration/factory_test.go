//go:build integration

package integration

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The Image Factory is a service on the internet, which the tier cannot
// reach: `rollout` asks a factory for its release list and, before a wave's
// first patch, for the images it will import. The tier's CLI reaches this
// stand-in instead, through the proxy the environment names (HTTPS_PROXY,
// as an operator's proxy would be named): the proxy answers CONNECT for any
// host with a TLS server whose certificate a tier CA signs for that host,
// and the CLI trusts that CA as its system roots (SSL_CERT_FILE). The page's
// commands and the pools' URLs stay as written. The stand-in serves what the
// Image Factory serves for a release it builds: GET /versions, the list, and
// /image/<schematic>/<version>/<file>; any other release is a 404.
type factoryStandIn struct {
	env      []string // HTTPS_PROXY and SSL_CERT_FILE for the CLI's processes
	releases map[string]bool

	mu    sync.Mutex
	asked []string // "METHOD host/path", in order
	certs map[string]*tls.Certificate
	ca    *x509.Certificate
	key   *ecdsa.PrivateKey
}

var (
	factoryOnce sync.Once
	factory     *factoryStandIn
	factoryErr  error
)

// factoryReleases are the Talos releases the stand-in builds: every patch
// the tier names, and none past them.
func factoryReleases() map[string]bool {
	out := map[string]bool{}
	for minor, newest := range map[int]int{11: 12, 12: 12, 13: 10} {
		for p := 0; p <= newest; p++ {
			out[fmt.Sprintf("v1.%d.%d", minor, p)] = true
		}
	}
	return out
}

// imageFactory starts the stand-in once per test binary (it holds no
// cluster state) and returns it; its listeners live as long as the binary.
func imageFactory(t testing.TB) *factoryStandIn {
	t.Helper()
	factoryOnce.Do(func() { factory, factoryErr = startFactoryStandIn() })
	if factoryErr != nil {
		t.Fatalf("the Image Factory stand-in: %v", factoryErr)
	}
	return factory
}

func startFactoryStandIn() (*factoryStandIn, error) {
	ca, key, der, err := newCA("tier Image Factory stand-in CA")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "factory-stand-in-")
	if err != nil {
		return nil, err
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	f := &factoryStandIn{releases: factoryReleases(), certs: map[string]*tls.Certificate{}, ca: ca, key: key}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go f.serveProxy(ln)
	f.env = []string{"HTTPS_PROXY=http://" + ln.Addr().String(), "https_proxy=http://" + ln.Addr().String(), "SSL_CERT_FILE=" + caFile}
	return f, nil
}

// serveProxy takes CONNECT host:443 and serves the factory over TLS on the
// tunnel, as host.
func (f *factoryStandIn) serveProxy(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go f.tunnel(conn)
	}
}

func (f *factoryStandIn) tunnel(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	req, err := http.ReadRequest(bufio.NewReader(conn))
	if err != nil || req.Method != http.MethodConnect {
		_, _ = conn.Write([]byte("HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n"))
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		return
	}
	tlsConn := tls.Server(conn, &tls.Config{GetCertificate: f.certificate, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	if err := tlsConn.Handshake(); err != nil {
		return
	}
	srv := &http.Server{Handler: http.HandlerFunc(f.serve), ReadHeaderTimeout: 10 * time.Second}
	_ = srv.Serve(&oneConnListener{conn: tlsConn, done: make(chan struct{})})
}

// certificate is a leaf for the host the client asked for, the tier CA's.
func (f *factoryStandIn) certificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	host := hello.ServerName
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.certs[host]; ok {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(int64(len(f.certs) + 2)),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, f.ca, &key.PublicKey, f.key)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	f.certs[host] = c
	return c, nil
}

var factoryImage = regexp.MustCompile(`^/image/[a-z0-9]+/(v[0-9]+\.[0-9]+\.[0-9]+)/[a-z0-9-]+\.raw\.(xz|zst)$`)

func (f *factoryStandIn) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.asked = append(f.asked, r.Method+" "+r.Host+r.URL.Path)
	f.mu.Unlock()
	switch m := factoryImage.FindStringSubmatch(r.URL.Path); {
	case r.URL.Path == "/versions" && r.Method == http.MethodGet:
		var list []string
		for v := range f.releases {
			list = append(list, v)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(list)
	case m != nil && f.releases[m[1]] && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusOK)
	default:
		http.NotFound(w, r)
	}
}

// askedFor is what the stand-in was asked whose path contains part.
func (f *factoryStandIn) askedFor(part string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, a := range f.asked {
		if strings.Contains(a, part) {
			out = append(out, a)
		}
	}
	return out
}

// oneConnListener serves one connection, then says it is closed.
type oneConnListener struct {
	conn net.Conn
	once sync.Once
	done chan struct{}
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	var c net.Conn
	l.once.Do(func() { c = l.conn })
	if c != nil {
		return &closeNotifyConn{Conn: c, done: l.done}, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error   { return nil }
func (l *oneConnListener) Addr() net.Addr { return l.conn.LocalAddr() }

// closeNotifyConn ends the listener when the served connection closes.
type closeNotifyConn struct {
	net.Conn
	done chan struct{}
	once sync.Once
}

func (c *closeNotifyConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return c.Conn.Close()
}

// withImageFactory is environ with the stand-in's proxy and CA in place of
// any the machine names, for a process that runs the CLI.
func withImageFactory(t testing.TB, environ []string) []string {
	t.Helper()
	f := imageFactory(t)
	out := make([]string, 0, len(environ)+len(f.env))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR":
			continue
		}
		out = append(out, kv)
	}
	return append(out, f.env...)
}
