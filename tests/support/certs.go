package support

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// Certificate is a self-signed certificate's PEM, valid from notBefore to
// notAfter, a CA (CA:TRUE, may sign certificates) or not.
func Certificate(t testing.TB, cn string, isCA bool, notBefore, notAfter time.Time) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter,
		BasicConstraintsValid: true, IsCA: isCA,
	}
	if isCA {
		tpl.KeyUsage = x509.KeyUsageCertSign
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// NotACertificate is a PEM certificate block whose DER is not a
// certificate, which the charts' PEM check takes (it starts MI like any DER
// sequence).
var NotACertificate = "-----BEGIN CERTIFICATE-----\n" + base64.StdEncoding.EncodeToString([]byte{0x30, 0x82, 0x00, 0x03, 0x02, 0x01, 0x01}) + "\n-----END CERTIFICATE-----\n"
