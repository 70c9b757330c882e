// Command cdi-clone-token signs the clone token cdi-apiserver's DataVolume
// webhook adds to a DataVolume that clones a PVC of another namespace (the
// cdi.kubevirt.io/storage.clone.token annotation), with CDI's own pkg/token:
// the same issuer, lifetime and payload, signed with the key pair whose public
// half CDI's controller reads. The integration tier runs CDI's controller but
// not cdi-apiserver (an admission webhook server with its own certificates and
// authorization proxy), and signs without the webhook's check of the user's
// right to clone (the tier's DataVolumes are the test's own).
package main

import (
	"crypto/x509"
	"encoding/pem"
	"flag"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"kubevirt.io/containerized-data-importer/pkg/common"
	"kubevirt.io/containerized-data-importer/pkg/token"
)

func main() {
	key := flag.String("key", "", "PEM RSA private key (PKCS#1), the pair of the controller's id_rsa.pub")
	sourceNamespace := flag.String("source-namespace", "", "namespace of the PVC cloned")
	sourceName := flag.String("source-name", "", "name of the PVC cloned")
	targetNamespace := flag.String("target-namespace", "", "namespace of the DataVolume")
	targetName := flag.String("target-name", "", "name of the DataVolume")
	flag.Parse()
	if err := run(*key, *sourceNamespace, *sourceName, *targetNamespace, *targetName); err != nil {
		fmt.Fprintln(os.Stderr, "cdi-clone-token:", err)
		os.Exit(1)
	}
}

func run(keyFile, sourceNamespace, sourceName, targetNamespace, targetName string) error {
	for flag, v := range map[string]string{"-key": keyFile, "-source-namespace": sourceNamespace, "-source-name": sourceName, "-target-namespace": targetNamespace, "-target-name": targetName} {
		if v == "" {
			return fmt.Errorf("%s is required", flag)
		}
	}
	raw, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return fmt.Errorf("%s holds no PEM block", keyFile)
	}
	priv, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	if err != nil {
		return fmt.Errorf("%s: %w", keyFile, err)
	}
	// As cdi-apiserver's webhook: issuer cdi-apiserver, 5 minutes, the PVC
	// resource, the target in Params.
	signed, err := token.NewGenerator(common.CloneTokenIssuer, priv, 5*time.Minute).Generate(&token.Payload{
		Operation: token.OperationClone,
		Name:      sourceName,
		Namespace: sourceNamespace,
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"},
		Params:    map[string]string{"targetNamespace": targetNamespace, "targetName": targetName},
	})
	if err != nil {
		return err
	}
	fmt.Println(signed)
	return nil
}
