package report

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// caValue checks one CA value at a values path (at) with X.509 (CAToWrite),
// as PEM, or, b64, as the base64 of PEM Talos reads in a registry's tls.ca;
// of names the values it is in. A value that is not a string, or not
// base64, is left to the chart, whose message names it.
func caValue(at string, v any, b64 bool, of string, now time.Time) error {
	s, ok := v.(string)
	if !ok || s == "" {
		return nil
	}
	if b64 {
		raw, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\n", "", "\r", "").Replace(s))
		if err != nil {
			return nil
		}
		s, at = string(raw), at+" (base64 of PEM, decoded)"
	}
	return CAToWrite(at+" "+of, s, now)
}

// registryCAs checks each registries.config.<host>.tls.ca in m.
func registryCAs(m map[string]any, b64 bool, of string, now time.Time) error {
	config, ok := publishedAt(m, "registries.config").(map[string]any)
	if !ok {
		return nil
	}
	for _, host := range SortedKeys(config) {
		if err := caValue("registries.config."+host+".tls.ca", publishedAt(asMap(config[host]), "tls.ca"), b64, of, now); err != nil {
			return err
		}
	}
	return nil
}

// checkCatalogCAs reads every CA the catalog's values would publish or write
// with X.509 (CAToWrite): the defaults it publishes to every tenant
// (tenantWorkers.talos.imageFactoryCA, registries.config.<host>.tls.ca, in
// ConfigMap cozy-public/kubernetes-worker-image-tenant-defaults) and its own
// (imageFactoryCA, images[N].imageFactoryCA, in its CA ConfigMaps in
// cozy-public). The chart checks each block's DER only as far as a template
// can; a key, a leaf, an expired certificate is refused here, named with its
// place (from says which values: the -f files, merged).
func checkCatalogCAs(vals map[string]any, from string, now time.Time) error {
	of := "(the catalog's values, " + from + ")"
	if err := caValue("tenantWorkers.talos.imageFactoryCA", publishedAt(vals, "tenantWorkers.talos.imageFactoryCA"), false, of, now); err != nil {
		return err
	}
	if err := registryCAs(vals, false, of, now); err != nil {
		return err
	}
	return ownCAs(vals, "", of, now)
}

// ownCAs checks the catalog's own CAs (imageFactoryCA and each
// images[N].imageFactoryCA) in m, named at prefix.
func ownCAs(m map[string]any, prefix, of string, now time.Time) error {
	if err := caValue(prefix+"imageFactoryCA", m["imageFactoryCA"], false, of, now); err != nil {
		return err
	}
	images, _ := m["images"].([]any)
	for i, e := range images {
		if err := caValue(fmt.Sprintf("%simages[%d].imageFactoryCA", prefix, i), asMap(e)["imageFactoryCA"], false, of, now); err != nil {
			return err
		}
	}
	return nil
}

// checkPlatformCAs reads the CAs platform values give every tenant's pools
// through _cluster (tenantWorkers.talos.imageFactoryCA; their registries
// take no CA) and those they forward to
// the catalog (kubernetesWorkerImage's), as checkCatalogCAs does the
// catalog's, named where the platform values hold them.
func checkPlatformCAs(vals map[string]any, from string, now time.Time) error {
	of := "(platform values " + from + ")"
	if err := caValue("tenantWorkers.talos.imageFactoryCA", publishedAt(vals, "tenantWorkers.talos.imageFactoryCA"), false, of, now); err != nil {
		return err
	}
	return ownCAs(asMap(vals["kubernetesWorkerImage"]), "kubernetesWorkerImage.", of, now)
}

// mergedWords say, short, how the -f files met the values the cluster holds.
func mergedWords(reset bool) string {
	if reset {
		return " alone (--reset-values)"
	}
	return ", merged over the values the cluster holds"
}

// PoolCAsToWrite reads every CA a pool's values (from: the files, layered)
// would have the chart write with X.509 (CAToWrite): talos.imageFactoryCA
// (PEM, into the ConfigMap its disks' imports trust), and, where the values
// carry the platform's _cluster, its talos.imageFactoryCA and each
// talos.registryConfig.<host>.tls.ca (base64 of PEM, as Talos reads it,
// into the talos-config ConfigMap in the tenant's namespace).
func PoolCAsToWrite(vals map[string]any, from string, now time.Time) error {
	of := "of the pool values " + from
	if err := caValue("talos.imageFactoryCA", publishedAt(vals, "talos.imageFactoryCA"), false, of, now); err != nil {
		return err
	}
	cluster := asMap(vals["_cluster"])
	if err := caValue("_cluster.talos.imageFactoryCA", publishedAt(cluster, "talos.imageFactoryCA"), false, of, now); err != nil {
		return err
	}
	config, ok := publishedAt(cluster, "talos.registryConfig").(map[string]any)
	if !ok {
		return nil
	}
	for _, host := range SortedKeys(config) {
		if err := caValue("_cluster.talos.registryConfig."+host+".tls.ca", publishedAt(asMap(config[host]), "tls.ca"), true, of, now); err != nil {
			return err
		}
	}
	return nil
}
