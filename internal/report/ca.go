package report

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"sort"
	"strings"
	"time"
)

// CAProblems reads a CA in effect (PEM certificates CDI's importer adds to
// the roots it trusts) as X.509, which the charts cannot: they check only
// its PEM form. It names each certificate that does not parse (its DER is
// not a certificate: CDI skips it), that is expired or not yet valid at now,
// or that is not a CA; none when every certificate is a CA valid now.
func CAProblems(pemText string, now time.Time) []string {
	var blocks []*pem.Block
	for rest := []byte(pemText); ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		blocks = append(blocks, b)
	}
	var out []string
	for i, b := range blocks {
		which := fmt.Sprintf("certificate %d of %d", i+1, len(blocks))
		if b.Type != "CERTIFICATE" {
			out = append(out, fmt.Sprintf("%s is a %q block, not a certificate: CDI's importer skips it", which, b.Type))
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: its DER is not an X.509 certificate (%v): CDI's importer skips it", which, err))
			continue
		}
		which += " (" + c.Subject.String() + ")"
		switch {
		case now.After(c.NotAfter):
			out = append(out, fmt.Sprintf("%s expired on %s: TLS refuses a chain through it", which, c.NotAfter.UTC().Format(time.RFC3339)))
		case now.Before(c.NotBefore):
			out = append(out, fmt.Sprintf("%s is not valid before %s: TLS refuses a chain through it until then", which, c.NotBefore.UTC().Format(time.RFC3339)))
		}
		if !c.BasicConstraintsValid || !c.IsCA {
			out = append(out, which+" is not a CA (its basic constraints do not say CA:TRUE): TLS trusts it only when the mirror serves this very certificate, never one it issued")
		}
	}
	return out
}

// CertificatesDigest names the certificates a PEM holds, as TLS trusts them:
// the sha256 of each certificate's DER, sorted, so the order of a bundle,
// text between its blocks or its line ends change nothing; "" when it holds
// no certificate. Two CAs in effect trust the same when their digests are
// equal.
func CertificatesDigest(pemText string) string {
	var sums []string
	for rest := []byte(pemText); ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			sum := sha256.Sum256(b.Bytes)
			sums = append(sums, hex.EncodeToString(sum[:]))
		}
	}
	if len(sums) == 0 {
		return ""
	}
	sort.Strings(sums)
	all := sha256.Sum256([]byte(strings.Join(sums, ",")))
	return "sha256:" + hex.EncodeToString(all[:])
}

// CAToWriteProblems are what CAProblems finds in a CA the CLI would publish
// or write, and more: text that holds no PEM block, or a "-----BEGIN " that
// does not decode (a block cut before its END line), holds no certificate a
// CA could be read from, where CAProblems reads nothing and says nothing.
func CAToWriteProblems(pemText string, now time.Time) []string {
	decoded := 0
	for rest := []byte(pemText); ; decoded++ {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
	}
	problems := CAProblems(pemText, now)
	switch begins := strings.Count(pemText, "-----BEGIN "); {
	case begins == 0:
		problems = append(problems, "it holds no PEM block (-----BEGIN CERTIFICATE-----), so no certificate")
	case begins > decoded:
		problems = append(problems, fmt.Sprintf("%d of its %d PEM blocks do not decode (a block cut before its -----END line, or a body that is not base64)", begins-decoded, begins))
	}
	return problems
}

// CAToWrite refuses a CA the CLI would publish or write (CAToWriteProblems),
// naming the place (at: a values path, with where it is written) and each
// block it refuses; nil for CA certificates valid now.
func CAToWrite(at, pemText string, now time.Time) error {
	if problems := CAToWriteProblems(pemText, now); len(problems) > 0 {
		return fmt.Errorf("%s is not CA certificates: %s; give the PEM certificates of the CA alone (-----BEGIN CERTIFICATE----- blocks, each a CA, CA:TRUE, valid now)", at, strings.Join(problems, "; "))
	}
	return nil
}
