package render

import (
	"fmt"
	"github.com/cozystack/golden-worker-images/internal/render"
	"github.com/cozystack/golden-worker-images/tests/support"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// schemaOff renders as `helm install --skip-schema-validation` (or a Flux
// HelmRelease with disableSchemaValidation): only the templates guard.
var schemaOff = render.Release{Name: testRelease, Namespace: testNamespace, SkipSchemaValidation: true}

// Every pool value the templates interpolate is checked by the templates: each
// refusal fires with schema validation off, names the pool and the value, and
// its neighbour (the nearest valid input) renders.
func TestPoolValueGuardsHoldWithTheSchemaOff(t *testing.T) {
	long := strings.Repeat("a", 254)
	for _, tc := range []struct{ name, values, refusal, neighbour string }{
		{"storageClass null", "{cluster: acme, storageClass: null}", "storageClass is null, which removes the chart's default", "{cluster: acme, storageClass: ''}"},
		{"version null", "{cluster: acme, version: null}", "version is null, which removes the chart's default", "{cluster: acme, version: v1.34}"},
		{"talos null", "{cluster: acme, talos: null}", "talos is null, not a map; remove the talos key", "{cluster: acme}"},
		{"talos string", "{cluster: acme, talos: v1.13.6}", `talos is "v1.13.6", not a map`, "{cluster: acme, talos: {version: v1.13.6}}"},
		{"talos unknown key", "{cluster: acme, talos: {verison: v1.13.5}}", `talos has no key "verison"; the keys it takes are version, schematicID, imageFactoryURL, installerRepository, registryMirrors`, "{cluster: acme, talos: {version: v1.13.5}}"},
		{"talos.version number", "{cluster: acme, talos: {version: 1.13}}", "talos.version is 1.13 (a number), not a string", "{cluster: acme, talos: {version: v1.13.5}}"},
		{"storageClass double dot", "{cluster: acme, storageClass: 'a..b'}", `storageClass "a..b" is not a DNS subdomain name`, "{cluster: acme, storageClass: a.b}"},
		{"storageClass 254", "{cluster: acme, storageClass: " + long + "}", `storageClass "` + long[:80] + `...(254 characters)" is not a DNS subdomain name`, "{cluster: acme, storageClass: " + long[:253] + "}"},
		{"storageClass number", "{cluster: acme, storageClass: 12}", "storageClass is 12 (a number), not a string", "{cluster: acme, storageClass: '12'}"},
		{"instanceType 254", "{cluster: acme, resources: {cpu: 1, memory: 1Gi}, instanceType: " + long + "}", `instanceType "` + long[:80] + `...(254 characters)" is not a DNS subdomain name`, "{cluster: acme, resources: {cpu: 1, memory: 1Gi}, instanceType: " + long[:253] + "}"},
		{"resources string", "{cluster: acme, resources: big}", `resources is "big", not a map`, "{cluster: acme, resources: {}}"},
		{"resources unknown key", "{cluster: acme, resources: {cpu: 2, memory: 4Gi, gpu: 1}}", `resources has no key "gpu"`, "{cluster: acme, resources: {cpu: 2, memory: 4Gi}}"},
		{"minReplicas string", "{cluster: acme, minReplicas: '3'}", `minReplicas "3" is not a whole number of workers`, "{cluster: acme, minReplicas: 3}"},
		{"minReplicas negative", "{cluster: acme, minReplicas: -1}", "minReplicas -1 (a number) is not a whole number of workers", "{cluster: acme, minReplicas: 0}"},
		{"maxReplicas fraction", "{cluster: acme, maxReplicas: 2.5}", "maxReplicas 2.5 (a number) is not a whole number of workers", "{cluster: acme, maxReplicas: 2}"},
		{"maxReplicas list", "{cluster: acme, maxReplicas: [1]}", "maxReplicas a list is not a whole number of workers", "{cluster: acme, maxReplicas: 1}"},
		{"min above max", "{cluster: acme, minReplicas: 3, maxReplicas: 2}", "minReplicas 3 is greater than maxReplicas 2", "{cluster: acme, minReplicas: 2, maxReplicas: 2}"},
		{"roles not a list", "{cluster: acme, roles: ingress}", `roles is "ingress", not a list`, "{cluster: acme, roles: [ingress]}"},
		{"role injects a document", `{cluster: acme, roles: ["x: y\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding"]}`, `roles[0] "x: y\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding" is not a label name`, "{cluster: acme, roles: [x-y]}"},
		{"role 64 characters", "{cluster: acme, roles: [" + long[:64] + "]}", `roles[0] "` + long[:64] + `" is not a label name`, "{cluster: acme, roles: [" + long[:63] + "]}"},
		{"role number", "{cluster: acme, roles: [1]}", "roles[0] 1 (a number) is not a label name", "{cluster: acme, roles: ['1']}"},
		{"role twice", "{cluster: acme, roles: [ingress, ingress]}", `roles lists "ingress" twice`, "{cluster: acme, roles: [ingress, egress]}"},
		{"nodeStartupTimeout number", "{cluster: acme, nodeStartupTimeout: 600}", "nodeStartupTimeout 600 (a number) is not a duration", "{cluster: acme, nodeStartupTimeout: 600s}"},
		{"nodeStartupTimeout words", "{cluster: acme, nodeStartupTimeout: ten minutes}", `nodeStartupTimeout "ten minutes" is not a duration`, "{cluster: acme, nodeStartupTimeout: '0'}"},
		{"maxUnhealthy map", "{cluster: acme, maxUnhealthy: {a: 1}}", "maxUnhealthy a map is neither a count nor a percentage", "{cluster: acme, maxUnhealthy: 1}"},
		{"maxUnhealthy 101%", "{cluster: acme, maxUnhealthy: 101%}", `maxUnhealthy "101%" is neither a count nor a percentage`, "{cluster: acme, maxUnhealthy: 100%}"},
		{"installerRepository injects", `{cluster: acme, talos: {installerRepository: "r.internal/installer\n  x: y"}}`, `talos.installerRepository "r.internal/installer\n  x: y" is not an image repository`, "{cluster: acme, talos: {installerRepository: 'r.internal:5000/siderolabs/installer'}}"},
		{"platform installerRepository", "{cluster: acme, _cluster: {talos: {installerRepository: 'R.internal/Installer'}}}", `_cluster.talos.installerRepository "R.internal/Installer" is not an image repository`, "{cluster: acme, _cluster: {talos: {installerRepository: 'R.internal/installer'}}}"},
		{"mirrors not a map", "{cluster: acme, talos: {registryMirrors: [docker.io]}}", "talos.registryMirrors is a list, not a map of registry host", "{cluster: acme, talos: {registryMirrors: {}}}"},
		{"mirror host", `{cluster: acme, talos: {registryMirrors: {"docker.io\nx": {endpoints: [https://m.internal]}}}}`, `talos.registryMirrors has the key "docker.io\nx", which is not a registry host`, "{cluster: acme, talos: {registryMirrors: {'docker.io:443': {endpoints: [https://m.internal]}}}}"},
		{"mirror not a map", "{cluster: acme, talos: {registryMirrors: {docker.io: https://m.internal}}}", `talos.registryMirrors[docker.io] is "https://m.internal", not a map`, "{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: [https://m.internal]}}}}"},
		{"mirror unknown key", "{cluster: acme, talos: {registryMirrors: {docker.io: {endpoint: [https://m.internal]}}}}", `talos.registryMirrors[docker.io] has no key "endpoint"`, "{cluster: acme, talos: {registryMirrors: {'*': {endpoints: [https://m.internal]}}}}"},
		{"mirror no endpoints", "{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: []}}}}", "talos.registryMirrors[docker.io].endpoints is a list; list at least one mirror URL", "{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: [http://m.internal:5000/v2]}}}}"},
		{"mirror endpoint", `{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: ["https://m.internal\n  x: y"]}}}}`, `talos.registryMirrors[docker.io].endpoints[0] "https://m.internal\n  x: y" is not a plain http(s) URL`, "{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: [https://m.internal]}}}}"},
		{"mirror flag", "{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: [https://m.internal], overridePath: 'yes'}}}}", `talos.registryMirrors[docker.io].overridePath is "yes"; set it to true or false`, "{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: [https://m.internal], overridePath: true}}}}"},
		// Found by FuzzValidatingHelpers: a % that starts no escape breaks every URL parser.
		{"mirror endpoint with a bare percent", "{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: ['https://m.internal/v2/%zz']}}}}", `talos.registryMirrors[docker.io].endpoints[0] "https://m.internal/v2/%zz" is not a plain http(s) URL`, "{cluster: acme, talos: {registryMirrors: {docker.io: {endpoints: ['https://m.internal/v2/%2Fdocker']}}}}"},
		{"platform mirror endpoint", "{cluster: acme, _cluster: {talos: {registryMirrors: {docker.io: {endpoints: [ftp://m.internal]}}}}}", `_cluster.talos.registryMirrors[docker.io].endpoints[0] "ftp://m.internal" is not a plain http(s) URL`, "{cluster: acme, _cluster: {talos: {registryMirrors: {docker.io: {endpoints: [https://m.internal]}}}}}"},
		{"_cluster not a map", "{cluster: acme, _cluster: [a]}", "_cluster is a list, not a map; _cluster is the platform's values channel", "{cluster: acme, _cluster: {}}"},
		{"_cluster.talos not a map", "{cluster: acme, _cluster: {talos: x}}", `_cluster.talos is "x", not a map`, "{cluster: acme, _cluster: {talos: {}}}"},
		{"registryConfig not a map", "{cluster: acme, _cluster: {talos: {registryConfig: [x]}}}", "_cluster.talos.registryConfig is a list, not a map", "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {auth: {username: u, password: p}}}}}}"},
		{"registryConfig host", `{cluster: acme, _cluster: {talos: {registryConfig: {"m.internal\nx: y": {auth: {username: u}}}}}}`, `_cluster.talos.registryConfig has the key "m.internal\nx: y", which is not a registry host`, "{cluster: acme, _cluster: {talos: {registryConfig: {'m.internal:5000': {auth: {username: u}}}}}}"},
		{"registryConfig entry", "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: [auth]}}}}", "_cluster.talos.registryConfig[m.internal] is a list, not a map of auth and tls", "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {}}}}}"},
		{"registryConfig typo", "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {tsl: {}}}}}}", `_cluster.talos.registryConfig[m.internal] has no key "tsl"`, "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {tls: {insecureSkipVerify: true}}}}}}"},
		{"registryConfig auth", "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {auth: secret}}}}}", `_cluster.talos.registryConfig[m.internal].auth is "secret", not a map`, "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {auth: {identityToken: t}}}}}}"},
		{"registryConfig auth typo", "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {auth: {user: u}}}}}}", `_cluster.talos.registryConfig[m.internal].auth has no key "user"`, "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {auth: {username: u, password: p}}}}}}"},
		{"registryConfig password number", "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {auth: {password: 1234}}}}}}", "_cluster.talos.registryConfig[m.internal].auth.password is 1234 (a number), not a string", "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {auth: {password: '1234'}}}}}}"},
		{"registryConfig insecureSkipVerify", "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {tls: {insecureSkipVerify: 'no'}}}}}}", `_cluster.talos.registryConfig[m.internal].tls.insecureSkipVerify is "no"; set it to true or false`, "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {tls: {insecureSkipVerify: false}}}}}}"},
		{"registryConfig clientIdentity", "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {tls: {clientIdentity: pem}}}}}}", `_cluster.talos.registryConfig[m.internal].tls.clientIdentity is "pem", not a map of crt and key`, "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {tls: {clientIdentity: {crt: " + pemBase64 + ", key: " + pemBase64 + "}}}}}}}"},
		{"registryConfig clientIdentity typo", "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {tls: {clientIdentity: {cert: c}}}}}}}", `_cluster.talos.registryConfig[m.internal].tls.clientIdentity has no key "cert"`, "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {tls: {clientIdentity: {crt: " + pemBase64 + "}}}}}}}"},
		{"registryConfig clientIdentity key", "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {tls: {clientIdentity: {key: [k]}}}}}}}", "_cluster.talos.registryConfig[m.internal].tls.clientIdentity.key is a list, not a string", "{cluster: acme, _cluster: {talos: {registryConfig: {m.internal: {tls: {clientIdentity: {key: " + pemBase64 + "}}}}}}}"},
		{"osImage number", "{cluster: acme, osImage: 1}", "osImage is 1 (a number), not a map", "{cluster: acme, osImage: {}}"},
		{"both paths", "{cluster: acme, osImage: {builtin: {}, factory: {}}}", "osImage sets both builtin and factory", "{cluster: acme, osImage: {builtin: {}}}"},
		{"osImage typo", "{cluster: acme, osImage: {bultin: {}}}", `osImage has no key "bultin"; the keys it takes are builtin, factory`, "{cluster: acme, osImage: {}}"},
		{"builtin typo", "{cluster: acme, osImage: {builtin: {schematicId: abc}}}", `osImage.builtin has no key "schematicId"; the keys it takes are schematicID, version`, "{cluster: acme, osImage: {factory: {schematicID: abc}}}"},
		{"factory typo", "{cluster: acme, osImage: {factory: {imageFactoryUrl: 'https://f.internal'}}}", `osImage.factory has no key "imageFactoryUrl"`, "{cluster: acme, osImage: {factory: {imageFactoryURL: 'https://f.internal'}}}"},
		{"builtin string", "{cluster: acme, osImage: {builtin: 'yes'}}", `osImage.builtin is "yes", not a map`, "{cluster: acme, osImage: {factory: {}}}"},
		{"builtin version number", "{cluster: acme, osImage: {factory: {version: 1.13}}}", "osImage.factory.version is 1.13 (a number), not a string", "{cluster: acme, osImage: {factory: {version: v1.13.5}}}"},
		{"platform osImage typo", "{cluster: acme, _cluster: {osImage: {factroy: {}}}}", `_cluster.osImage has no key "factroy"`, "{cluster: acme, _cluster: {osImage: {factory: {}}}}"},
		// Bounds: each limit refused one past it, its neighbour at the limit.
		{"33 roles", "{cluster: acme, roles: " + flowList(33, "r%d") + "}", "roles has 33 roles, more than the 32 the chart takes", "{cluster: acme, roles: " + flowList(32, "r%d") + "}"},
		{"65 mirrors", "{cluster: acme, talos: {registryMirrors: " + flowMirrors(65, 1) + "}}", "talos.registryMirrors has 65 registry hosts, more than the 64 the chart takes", "{cluster: acme, talos: {registryMirrors: " + flowMirrors(64, 1) + "}}"},
		{"17 endpoints", "{cluster: acme, talos: {registryMirrors: " + flowMirrors(1, 17) + "}}", "talos.registryMirrors[h0.internal].endpoints has 17 endpoints, more than the 16 the chart takes", "{cluster: acme, talos: {registryMirrors: " + flowMirrors(1, 16) + "}}"},
		{"65 platform mirrors", "{cluster: acme, _cluster: {talos: {registryMirrors: " + flowMirrors(65, 1) + "}}}", "_cluster.talos.registryMirrors has 65 registry hosts", "{cluster: acme, _cluster: {talos: {registryMirrors: " + flowMirrors(64, 1) + "}}}"},
		{"65 registry config hosts", "{cluster: acme, _cluster: {talos: {registryConfig: " + flowConfig(65) + "}}}", "_cluster.talos.registryConfig has 65 registry hosts, more than the 64 the chart takes", "{cluster: acme, _cluster: {talos: {registryConfig: " + flowConfig(64) + "}}}"},
		{"diskSize exponent", "{cluster: acme, diskSize: '2e100'}", `diskSize "2e100" is not a plain value: it is written with an exponent of more than 2 digits (e100); it is written into an object as it is, so set diskSize to a quantity such as 20Gi (at most 32 characters, below 8Ei, no finer than 1n)`, "{cluster: acme, diskSize: '2e10'}"},
		{"diskSize 33 characters", "{cluster: acme, diskSize: '" + strings.Repeat("1", 33) + "'}", `diskSize "` + strings.Repeat("1", 33) + `" is not a plain value: it is 33 characters long, more than the 32 a quantity may have here`, "{cluster: acme, diskSize: '" + strings.Repeat("0", 21) + "21474836480'}"},
		{"diskSize 8Ei", "{cluster: acme, diskSize: '9223372036854775808'}", `diskSize "9223372036854775808" is not a plain value: it is 2^63 (8Ei) or more, more than the API server stores`, "{cluster: acme, diskSize: '9223372036854774784'}"},
		{"diskSize finer than 1n", "{cluster: acme, diskSize: '0.0000000001'}", `diskSize "0.0000000001" is not a plain value: it is finer than 1n (more than nine decimal places), which the API server rounds up`, "{cluster: acme, diskSize: '4453302272.000000001'}"},
		{"diskSize a list", "{cluster: acme, diskSize: [20Gi]}", "diskSize a list is not a plain value: it is not a string", "{cluster: acme, diskSize: 20Gi}"},
		{"memory exponent", "{cluster: acme, resources: {cpu: 2, memory: '4e999'}}", `resources.memory "4e999" is not a plain value: it is written with an exponent of more than 2 digits`, "{cluster: acme, resources: {cpu: 2, memory: '4e9'}}"},
		{"cpu past int32", "{cluster: acme, resources: {cpu: 2147483648, memory: 4Gi}}", "resources.cpu 2.147483648e+09 (a number) is not a whole number of cores (it is outside 1 to 2147483647)", "{cluster: acme, resources: {cpu: 2147483647, memory: 4Gi}}"},
		{"cpu fraction", "{cluster: acme, resources: {cpu: 1.5, memory: 4Gi}}", "resources.cpu 1.5 (a number) is not a whole number of cores (it is not a whole number)", "{cluster: acme, resources: {cpu: 1, memory: 4Gi}}"},
		{"cpu string of a fraction", "{cluster: acme, resources: {cpu: '2.5', memory: 4Gi}}", `resources.cpu "2.5" is not a whole number of cores (it is not a number)`, "{cluster: acme, resources: {cpu: '2', memory: 4Gi}}"},
		{"minReplicas past int32", "{cluster: acme, minReplicas: 2147483648, maxReplicas: 2147483648}", "minReplicas 2.147483648e+09 (a number) is not a whole number of workers from 0 to 2147483647 (it is outside 0 to 2147483647)", "{cluster: acme, minReplicas: 2147483647, maxReplicas: 2147483647}"},
		{"maxUnhealthy past int32", "{cluster: acme, maxUnhealthy: 2147483648}", "maxUnhealthy 2.147483648e+09 (a number) is neither a count nor a percentage", "{cluster: acme, maxUnhealthy: '2147483647'}"},
		{"nodeStartupTimeout 33 characters", "{cluster: acme, nodeStartupTimeout: " + strings.Repeat("1", 32) + "s}", "nodeStartupTimeout \"" + strings.Repeat("1", 32) + "s\" is not a duration Cluster API reads (it is 33 characters long", "{cluster: acme, nodeStartupTimeout: " + strings.Repeat("0", 30) + "1s}"},
		{"nodeStartupTimeout past 2562047h", "{cluster: acme, nodeStartupTimeout: 2562047h1m}", `nodeStartupTimeout "2562047h1m" is not a duration Cluster API reads (it is longer than 2562047h, beyond the durations Go reads)`, "{cluster: acme, nodeStartupTimeout: 2562046h59m}"},
		{"schematicID 65 characters", "{cluster: acme, talos: {schematicID: " + strings.Repeat("a", 65) + "}}", `schematicID "` + strings.Repeat("a", 65) + `" (from talos.schematicID) is malformed: it must match ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ and be at most 64 characters`, "{cluster: acme, talos: {schematicID: " + strings.Repeat("a", 64) + "}}"},
		{"version 65 characters", "{cluster: acme, osImage: {factory: {version: v1.13.6-" + strings.Repeat("a", 57) + "}}}", `version "v1.13.6-` + strings.Repeat("a", 57) + `" (from osImage.factory.version) is malformed: it must match ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9a-z]+(\.[0-9a-z]+)*)?$ and be at most 64 characters`, "{cluster: acme, osImage: {factory: {version: v1.13.6-" + strings.Repeat("a", 56) + "}}}"},
		{"factory URL 2049 characters", "{cluster: acme, talos: {imageFactoryURL: 'https://f.internal/" + strings.Repeat("a", 2030) + "'}}", `imageFactoryURL "https://f.internal/` + strings.Repeat("a", 61) + `...(2049 characters)" (from talos.imageFactoryURL) is malformed: it must match`, "{cluster: acme, talos: {imageFactoryURL: 'https://f.internal/" + strings.Repeat("a", 2029) + "'}}"},
		{"unknown top-level key", "{cluster: acme, osimage: {builtin: {}}}", `the values have the key "osimage", which the chart does not take; it takes cluster, storageClass, diskSize, instanceType, resources, podCpuLimit, podCpuRequest, gpus, kubelet, logSerialConsole, roles, minReplicas, maxReplicas, maxSurge, maxUnhealthy, nodeStartupTimeout, readyUnknownTimeout, readyFalseTimeout, maxNodeProvisionTime, version, talos, images and osImage (values.yaml documents each). Fix the spelling or remove the key`, "{cluster: acme, osImage: {factory: {}}}"},
		{"unknown top-level keys", "{cluster: acme, b: 1, a: 2, c: 3}", `the values have the key "a" and 2 more, which the chart does not take`, "{cluster: acme, _namespace: {a: 2}, global: {b: 1}}"},
		{"osImage null", "{cluster: acme, osImage: null}", "osImage is null, not a map; write it as a map with builtin or factory", "{cluster: acme, osImage: {}}"},
		{"builtin false", "{cluster: acme, osImage: {builtin: false}}", "osImage.builtin is false (a boolean), not a map; write it as builtin: {} to take talos.*", "{cluster: acme, osImage: {builtin: {}}}"},
		{"factory empty string", "{cluster: acme, osImage: {factory: ''}}", `osImage.factory is "", not a map`, "{cluster: acme, osImage: {factory: {}}}"},
		{"platform osImage false", "{cluster: acme, _cluster: {osImage: false}}", "_cluster.osImage is false (a boolean), not a map", "{cluster: acme, _cluster: {osImage: null}}"},
		{"platform builtin list, pool's own osImage set", "{cluster: acme, osImage: {}, _cluster: {osImage: {builtin: []}}}", "_cluster.osImage.builtin is a list, not a map", "{cluster: acme, osImage: {}, _cluster: {osImage: {builtin: {}}}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderPoolAs(t, schemaOff, vals(t, tc.values), nil)
			requireRefusal(t, err, "pool kubernetes-acme-workers: "+tc.refusal)
			_, err = renderPoolAs(t, schemaOff, vals(t, tc.neighbour), nil)
			require.NoError(t, err, "neighbour %s renders", tc.neighbour)
		})
	}
}

// The render keeps what it computes on the root context, out of reach of
// values. In a pool, a preset under the old state keys is an unknown key and
// refused as one (a tenant cannot even try); the catalog, whose values are the
// operator's, renders the same bytes with a preset entry list.
func TestPresetRenderStateChangesNothing(t *testing.T) {
	preset := `
_kubernetesNodes:
  reportOnly: true
  validated: true
  image: {clone: true, schematicID: abc, version: v1.0.0, golden: any-pvc}
  disk: {clone: true, golden: any-pvc, storageClassName: local, url: "https://evil"}
  creation: {origin: builtin, imageFactoryURL: "https://evil", osImageText: ""}
`
	for _, values := range []string{"cluster: acme", "{cluster: acme, osImage: {builtin: {}}}"} {
		withPreset := vals(t, values)
		for k, v := range vals(t, preset) {
			withPreset[k] = v
		}
		_, err := renderPoolAs(t, schemaOff, withPreset, healthyCluster(t))
		requireRefusal(t, err, `pool kubernetes-acme-workers: the values have the key "_kubernetesNodes", which the chart does not take`)
		mustRenderPoolSchemaOff(t, vals(t, values), healthyCluster(t))
	}

	// The catalog: a preset entry list cannot put another name into the clone Role.
	plain := mustRenderCatalogAs(t, catalogSchemaOff, nil)
	got := mustRenderCatalogAs(t, catalogSchemaOff, vals(t, "_kubernetesWorkerImageEntries: [{name: any-pvc, url: 'https://evil', storage: 1Gi, storageClass: '', label: x, from: {}}]"))
	assert.Equal(t, plain.Text(), got.Text(), "a preset entry list renders the same bytes")
	assert.NotContains(t, got.Text(), "any-pvc")
}

func mustRenderPoolSchemaOff(t testing.TB, values map[string]interface{}, cluster *support.Cluster) *render.Manifest {
	t.Helper()
	m, err := renderPoolAs(t, schemaOff, values, cluster)
	require.NoError(t, err)
	return m
}

var catalogSchemaOff = render.Release{Name: "kubernetes-worker-image", Namespace: catalogNamespace, SkipSchemaValidation: true}

func mustRenderCatalogAs(t testing.TB, rel render.Release, values map[string]interface{}) *render.Manifest {
	t.Helper()
	m, err := renderCatalogAs(t, rel, values, nil)
	require.NoError(t, err)
	return m
}

// Names that YAML would read as another type stay strings: the disk binds on
// the class asked for, and the API server decodes the duration. Plain names
// keep their bytes (the golden renders prove that for every committed case).
func TestNamesThatLookLikeOtherTypesStayStrings(t *testing.T) {
	for _, name := range []string{"null", "yes", "no", "on", "off", "y", "n", "true", "false", "0123", "123", "1e3", "1.5", "0x1f", "2026-01-01", "1-fast", "12.fast"} {
		t.Run(name, func(t *testing.T) {
			m := mustRenderPool(t, vals(t, "{cluster: acme, storageClass: '"+name+"', instanceType: '"+name+"'}"), nil)
			disk := diskOf(m)
			assert.Equal(t, name, render.Get(disk, "spec.storage.storageClassName"), "storageClassName stays the string %q", name)
			tmpl := doc(t, m, "KubevirtMachineTemplate")
			assert.Equal(t, name, render.Get(tmpl.Object, "spec.template.spec.virtualMachineTemplate.spec.instancetype.name"))
		})
	}
	m := mustRenderPool(t, vals(t, "{cluster: acme, nodeStartupTimeout: '0'}"), nil)
	assert.Equal(t, "0", render.Get(doc(t, m, "MachineHealthCheck").Object, "spec.nodeStartupTimeout"), "a zero timeout is the duration string \"0\"")
	assert.Contains(t, doc(t, m, "MachineHealthCheck").Text, `nodeStartupTimeout: "0"`)
	plain := mustRenderPool(t, vals(t, "{cluster: acme, storageClass: replicated, nodeStartupTimeout: 10m}"), nil)
	assert.Contains(t, doc(t, plain, "KubevirtMachineTemplate").Text, "storageClassName: \"replicated\"\n", "a class is quoted, as Cozystack's chart writes it")
	assert.Contains(t, doc(t, plain, "KubevirtMachineTemplate").Text, "name: u1.medium\n", "a plain instancetype name is written as Cozystack's chart writes it")
	assert.Contains(t, doc(t, plain, "MachineHealthCheck").Text, "nodeStartupTimeout: 10m\n")

	// On the clone path the resolved default class is written the same way.
	cluster := clusterFromYAML(t, golden{class: `"on"`, size: "6Gi", phase: "Succeeded"}.yaml()+storageClass(`"on"`, "2026-01-01T00:00:00Z", true, gaDefault), "cluster/instancetypes.yaml")
	clone := mustRenderPool(t, vals(t, "{cluster: acme, storageClass: '', osImage: {builtin: {}}}"), cluster)
	assert.Equal(t, "on", render.Get(diskOf(clone), "spec.storage.storageClassName"))
}

// The creation record reads back exactly what was written. A JSON values file
// can carry a literal "<<" key, which YAML would read back as a merge and so
// switch the pool's disk source on its next upgrade: it never reaches a record.
func TestCreationRecordReadsBackWhatWasWritten(t *testing.T) {
	dir := t.TempDir()
	readJSON := func(name, text string) map[string]interface{} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		v, err := render.ReadValues(path)
		require.NoError(t, err)
		return v
	}
	merge := readJSON("merge.json", `{"cluster": "acme", "_cluster": {"osImage": {"<<": {"factory": {}}, "builtin": {}}}}`)
	cluster := healthyCluster(t)
	_, err := renderPoolAs(t, schemaOff, merge, cluster)
	requireRefusal(t, err, `pool kubernetes-acme-workers: _cluster.osImage has no key "<<"`)
	merge = readJSON("nested.json", `{"cluster": "acme", "_cluster": {"osImage": {"builtin": {"<<": {"version": "v1.13.5"}}}}}`)
	_, err = renderPoolAs(t, schemaOff, merge, cluster)
	requireRefusal(t, err, `pool kubernetes-acme-workers: _cluster.osImage.builtin has no key "<<"`)
	own := readJSON("own.json", `{"cluster": "acme", "osImage": {"<<": {"factory": {}}}}`)
	_, err = renderPoolAs(t, schemaOff, own, cluster)
	requireRefusal(t, err, `pool kubernetes-acme-workers: osImage has no key "<<"`)

	// Install with a platform default, apply, then upgrade with the platform
	// default changed: the record reads back and the bytes stay.
	installValues := readJSON("install.json", `{"cluster": "acme", "_cluster": {"osImage": {"builtin": {"version": "v1.13.6"}}}}`)
	install := mustRenderPoolSchemaOff(t, installValues, cluster)
	require.NoError(t, cluster.Apply(install, testNamespace))
	upgradeValues := readJSON("upgrade.json", `{"cluster": "acme", "_cluster": {"osImage": {"factory": {}}}}`)
	upgraded, err := renderPoolAs(t, render.Release{Name: testRelease, Namespace: testNamespace, Upgrade: true, SkipSchemaValidation: true}, upgradeValues, cluster)
	require.NoError(t, err)
	assert.Equal(t, install.Text(), upgraded.Text(), "an upgrade reads the record back exactly")

	// An earlier version's record that holds a merge key (as no version of this chart writes) is refused, not merged.
	forged := legacyRecord(`{origin: platform, imageFactoryURL: "", osImage: "builtin: {}\n'<<': {factory: {}}"}`)
	_, err = renderPool(t, vals(t, "cluster: acme"), clusterFromYAML(t, forged, "cluster/instancetypes.yaml"))
	requireRefusal(t, err, "pool kubernetes-acme-workers: the osImage recorded in ConfigMap tenant-acme/kubernetes-acme-workers-created-with holds a YAML merge key, anchor, alias or tag")
	neighbour := strings.Replace(forged, `builtin: {}\n'<<': {factory: {}}`, `factory: {}`, 1)
	_, err = renderPool(t, vals(t, "cluster: acme"), clusterFromYAML(t, neighbour, "cluster/instancetypes.yaml"))
	require.NoError(t, err, "a record the chart wrote renders")
}

// The catalog's own guards behind its schema.
func TestCatalogValueGuardsHoldWithTheSchemaOff(t *testing.T) {
	entry := "{schematicID: abc, version: v1.13.6"
	for _, tc := range []struct{ name, values, refusal, neighbour string }{
		{"entry typo", "{images: [" + entry + ", storageclass: fast}]}", `images[0] has no key "storageclass"; an entry takes schematicID, version, imageFactoryURL, storage, storageClass`, "{images: [" + entry + ", storageClass: fast}]}"},
		{"entry number", "{images: [" + entry + ", storage: 6}]}", "images[0].storage is 6, not a string", "{images: [" + entry + ", storage: '6'}]}"},
		{"entry map", "{images: [" + entry + ", storageClass: {a: b}}]}", "images[0].storageClass is a map or list, not a string", "{images: [" + entry + ", storageClass: ''}]}"},
		{"retire as a string", "{images: [" + entry + ", retire: 'true'}]}", `images[0].retire is "true", not a boolean`, "{images: [" + entry + ", retire: true}]}"},
		{"retire as a number", "{images: [" + entry + ", retire: 1}]}", "images[0].retire is 1 (a number), not a boolean", "{images: [" + entry + ", retire: false}]}"},
		{"string field as a boolean", "{images: [" + entry + ", storageClass: true}]}", "images[0].storageClass is true, not a string", "{images: [" + entry + ", retire: true}]}"},
		{"storageClass double dot", "{storageClass: 'a..b'}", `storageClass "a..b" (from storageClass) is not a StorageClass name`, "{storageClass: 'a.b'}"},
		{"subjects not a list", "{cloneSubjects: {kind: Group}}", "cloneSubjects is not a list", "{cloneSubjects: []}"},
		{"subject not a map", "{cloneSubjects: [Group]}", "cloneSubjects[0] is not a map", "{cloneSubjects: [{kind: Group, name: g}]}"},
		{"subject typo", "{cloneSubjects: [{kind: Group, name: g, namespce: x}]}", `cloneSubjects[0] has no key "namespce"`, "{cloneSubjects: [{kind: ServiceAccount, name: default, namespace: x}]}"},
		{"subject kind", "{cloneSubjects: [{kind: Role, name: g}]}", `cloneSubjects[0].kind "Role" is not Group, User or ServiceAccount`, "{cloneSubjects: [{kind: User, name: g}]}"},
		{"subject name injects", `{cloneSubjects: [{kind: Group, name: "g\n- kind: User"}]}`, "cloneSubjects[0].name is not a plain name", "{cloneSubjects: [{kind: Group, name: 'system:serviceaccounts:tenant-acme'}]}"},
		{"subject no name", "{cloneSubjects: [{kind: Group}]}", "cloneSubjects[0] has no name", "{cloneSubjects: [{kind: Group, name: g}]}"},
		{"service account without namespace", "{cloneSubjects: [{kind: ServiceAccount, name: default}]}", "a ServiceAccount subject needs its namespace", "{cloneSubjects: [{kind: ServiceAccount, name: default, namespace: tenant-acme}]}"},
		{"group with namespace", "{cloneSubjects: [{kind: Group, name: g, namespace: x}]}", "a ServiceAccount subject needs its namespace, and a Group or User has none", "{cloneSubjects: [{kind: Group, name: g}]}"},
		{"service account with the RBAC group", "{cloneSubjects: [{kind: ServiceAccount, name: default, namespace: x, apiGroup: rbac.authorization.k8s.io}]}", `cloneSubjects[0] (ServiceAccount default): apiGroup "rbac.authorization.k8s.io" does not belong to the kind; a ServiceAccount takes apiGroup "" and a Group or User takes rbac.authorization.k8s.io. Set apiGroup to "", or leave it out`, "{cloneSubjects: [{kind: ServiceAccount, name: default, namespace: x, apiGroup: ''}]}"},
		{"33 entries", "{images: " + flowEntries(33, 0) + "}", "images has 33 entries, more than the 32 the chart takes", "{images: " + flowEntries(32, 0) + "}"},
		{"9 additional classes", "{images: " + flowEntries(1, 9) + "}", "images[0].additionalStorageClasses has 9 classes, more than the 8 the chart takes", "{images: " + flowEntries(1, 8) + "}"},
		{"33 clone subjects", "{cloneSubjects: " + flowSubjects(33) + "}", "cloneSubjects has 33 subjects, more than the 32 the chart takes", "{cloneSubjects: " + flowSubjects(32) + "}"},
		{"storage exponent", "{storage: '6e999'}", `storage "6e999" (from storage) is not a Kubernetes quantity the API server stores as written (it is written with an exponent of more than 2 digits (e999))`, "{storage: '6e9'}"},
		{"storage 8Ei", "{images: [" + entry + ", storage: 8Ei}]}", `storage "8Ei" (from images[0].storage) is not a Kubernetes quantity the API server stores as written (it is 2^63 (8Ei) or more`, "{images: [" + entry + ", storage: 7Ei}]}"},
		{"storage finer than 1n", "{storage: '0.0000000001'}", "it is finer than 1n", "{storage: '0.000000001'}"},
		{"schematicID 65 characters", "{images: [{schematicID: " + strings.Repeat("a", 65) + ", version: v1.13.6}]}", "and be at most 64 characters", "{images: [{schematicID: " + strings.Repeat("a", 64) + ", version: v1.13.6}]}"},
		{"version 65 characters", "{images: [{schematicID: abc, version: v1.13.6-" + strings.Repeat("a", 57) + "}]}", "is not a Talos release: it must match", "{images: [{schematicID: abc, version: v1.13.6-" + strings.Repeat("a", 56) + "}]}"},
		{"factory URL 2049 characters", "{imageFactoryURL: 'https://f.internal/" + strings.Repeat("a", 2030) + "'}", "and be at most 2048 characters", "{imageFactoryURL: 'https://f.internal/" + strings.Repeat("a", 2029) + "'}"},
		{"group with another group", "{cloneSubjects: [{kind: Group, name: g, apiGroup: apps}]}", `cloneSubjects[0] (Group g): apiGroup "apps" does not belong to the kind; a ServiceAccount takes apiGroup "" and a Group or User takes rbac.authorization.k8s.io. Set apiGroup to "rbac.authorization.k8s.io"`, "{cloneSubjects: [{kind: Group, name: g, apiGroup: ''}]}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderCatalogAs(t, catalogSchemaOff, vals(t, tc.values), nil)
			requireRefusal(t, err, tc.refusal)
			_, err = renderCatalogAs(t, catalogSchemaOff, vals(t, tc.neighbour), nil)
			require.NoError(t, err, "neighbour %s renders", tc.neighbour)
		})
	}
}

// The platform checks what it forwards to the catalog and to the pools with the
// rules those charts apply (worker-image-lib), with schema validation off too.
func TestPlatformValueGuardsHoldWithTheSchemaOff(t *testing.T) {
	c := platformChart(t)
	rel := render.Release{Name: "cozystack-platform", Namespace: "cozy-system", SkipSchemaValidation: true}
	for _, tc := range []struct{ name, values, refusal, neighbour string }{
		{"enabledPackages not a list", "{bundles: {enabledPackages: cozystack.kubernetes-worker-image}}", `bundles.enabledPackages is "cozystack.kubernetes-worker-image", not a list`, "{bundles: {enabledPackages: [cozystack.kubernetes-worker-image]}}"},
		{"disabledPackages entry", "{bundles: {disabledPackages: [{a: b}]}}", "bundles.disabledPackages[0] is a map, not a string", "{bundles: {disabledPackages: [a]}}"},
		{"catalog settings not a map", "{kubernetesWorkerImage: [a]}", "kubernetesWorkerImage is a list, not a map of catalog settings", "{kubernetesWorkerImage: {}}"},
		{"catalog settings typo", "{kubernetesWorkerImage: {image: []}}", `kubernetesWorkerImage has no key "image"`, "{kubernetesWorkerImage: {images: []}}"},
		{"catalog factory map", "{kubernetesWorkerImage: {imageFactoryURL: {a: b}}}", "kubernetesWorkerImage.imageFactoryURL is a map, not a string", "{kubernetesWorkerImage: {imageFactoryURL: 'https://f.internal'}}"},
		{"catalog storage", `{kubernetesWorkerImage: {storage: "6Gi\nx: y"}}`, `kubernetesWorkerImage.storage "6Gi\nx: y" is malformed`, "{kubernetesWorkerImage: {storage: 6Gi}}"},
		{"catalog images not a list", "{kubernetesWorkerImage: {images: {schematicID: a}}}", "kubernetesWorkerImage.images is a map, not a list", "{kubernetesWorkerImage: {images: [{schematicID: a, version: v1.13.6}]}}"},
		{"catalog entry typo", "{kubernetesWorkerImage: {images: [{schematicID: a, verison: v1.13.6}]}}", `kubernetesWorkerImage.images[0] has no key "verison"`, "{kubernetesWorkerImage: {images: [{schematicID: a, version: v1.13.6}]}}"},
		{"catalog entry retire", "{kubernetesWorkerImage: {images: [{schematicID: a, version: v1.13.6, retire: 'yes'}]}}", `kubernetesWorkerImage.images[0].retire is "yes", not a boolean`, "{kubernetesWorkerImage: {images: [{schematicID: a, version: v1.13.6, retire: true}]}}"},
		{"catalog entry not a map", "{kubernetesWorkerImage: {images: [a]}}", `kubernetesWorkerImage.images[0] is "a", not an entry`, "{kubernetesWorkerImage: {images: []}}"},
		{"registries not a map", "{registries: [a]}", "registries is a list, not a map of mirrors and config", "{registries: {}}"},
		{"mirror host", `{registries: {mirrors: {"docker.io\nx: y": {endpoints: [https://m.internal]}}}}`, `registries.mirrors has the key "docker.io\nx: y", which is not a registry host`, "{registries: {mirrors: {docker.io: {endpoints: [https://m.internal]}}}}"},
		{"config not a map", "{registries: {config: [a]}}", "registries.config is a list, not a map of endpoint to auth/TLS config", "{registries: {config: {}}}"},
		{"config host", `{registries: {config: {"https://m.internal\nx: y/v2": {auth: {username: u}}}}}`, `registries.config has the key "m.internal\nx: y", which is not a registry host`, "{registries: {config: {'https://m.internal/v2': {auth: {username: u}}}}}"},
		{"config password", "{registries: {config: {m.internal: {auth: {password: {a: b}}}}}}", "registries.config[m.internal].auth.password is a map, not a string", "{registries: {config: {m.internal: {auth: {password: p}}}}}"},
		{"tenantWorkers not a map", "{tenantWorkers: x}", `tenantWorkers is "x", not a map`, "{tenantWorkers: {}}"},
		{"tenantWorkers.talos not a map", "{tenantWorkers: {talos: [x]}}", "tenantWorkers.talos is a list, not a map", "{tenantWorkers: {talos: {}}}"},
		{"tenantWorkers.talos typo", "{tenantWorkers: {talos: {installerRepo: r.internal/i}}}", `tenantWorkers.talos has no key "installerRepo"`, "{tenantWorkers: {talos: {installerRepository: r.internal/i}}}"},
		{"installer repository", "{tenantWorkers: {talos: {installerRepository: 'r.internal/I'}}}", `tenantWorkers.talos.installerRepository "r.internal/I" is not an image repository`, "{tenantWorkers: {talos: {installerRepository: r.internal/i}}}"},
		{"factory URL", "{tenantWorkers: {talos: {imageFactoryURL: 'https://f.internal/ x'}}}", `tenantWorkers.talos.imageFactoryURL "https://f.internal/ x" is not a plain http(s) URL`, "{tenantWorkers: {talos: {imageFactoryURL: 'https://f.internal/'}}}"},
		{"factory URL number", "{tenantWorkers: {talos: {imageFactoryURL: 1}}}", "tenantWorkers.talos.imageFactoryURL is 1 (a number), not a string", "{tenantWorkers: {talos: {imageFactoryURL: ''}}}"},
		{"osImage typo", "{tenantWorkers: {osImage: {bultin: {}}}}", `tenantWorkers.osImage has no key "bultin"`, "{tenantWorkers: {osImage: {builtin: {}}}}"},
		{"osImage field", "{tenantWorkers: {osImage: {builtin: {version: [v1]}}}}", "tenantWorkers.osImage.builtin.version is a list, not a string", "{tenantWorkers: {osImage: {builtin: {version: v1.13.6}}}}"},
		{"osImage builtin false", "{tenantWorkers: {osImage: {builtin: false}}}", "tenantWorkers.osImage.builtin is false (a boolean), not a map", "{tenantWorkers: {osImage: {builtin: {}}}}"},
		{"osImage a string", "{tenantWorkers: {osImage: builtin}}", `tenantWorkers.osImage is "builtin", not a map`, "{tenantWorkers: {osImage: null}}"},
		{"129 packages", "{bundles: {enabledPackages: " + flowList(129, "p%d") + "}}", "bundles.enabledPackages has 129 packages, more than the 128 the chart takes", "{bundles: {enabledPackages: " + flowList(128, "p%d") + "}}"},
		{"129 disabled packages", "{bundles: {disabledPackages: " + flowList(129, "p%d") + "}}", "bundles.disabledPackages has 129 packages", "{bundles: {disabledPackages: " + flowList(128, "p%d") + "}}"},
		{"33 catalog entries", "{kubernetesWorkerImage: {images: " + flowEntries(33, 0) + "}}", "kubernetesWorkerImage.images has 33 entries, more than the 32 the chart takes", "{kubernetesWorkerImage: {images: " + flowEntries(32, 0) + "}}"},
		{"9 additional classes", "{kubernetesWorkerImage: {images: " + flowEntries(1, 9) + "}}", "kubernetesWorkerImage.images[0].additionalStorageClasses has 9 classes", "{kubernetesWorkerImage: {images: " + flowEntries(1, 8) + "}}"},
		{"catalog storage 8Ei", "{kubernetesWorkerImage: {storage: 8Ei}}", `kubernetesWorkerImage.storage "8Ei" is not a plain value: it is 2^63 (8Ei) or more`, "{kubernetesWorkerImage: {storage: 7Ei}}"},
		{"65 mirrors", "{registries: {mirrors: " + flowMirrors(65, 1) + "}}", "registries.mirrors has 65 registry hosts", "{registries: {mirrors: " + flowMirrors(64, 1) + "}}"},
		{"17 endpoints", "{registries: {mirrors: " + flowMirrors(1, 17) + "}}", "registries.mirrors[h0.internal].endpoints has 17 endpoints", "{registries: {mirrors: " + flowMirrors(1, 16) + "}}"},
		{"65 registry config hosts", "{registries: {config: " + flowConfig(65) + "}}", "registries.config has 65 registry hosts", "{registries: {config: " + flowConfig(64) + "}}"},
		{"tenant factory URL 2049 characters", "{tenantWorkers: {talos: {imageFactoryURL: 'https://f.internal/" + strings.Repeat("a", 2030) + "'}}}", "and be at most 2048 characters", "{tenantWorkers: {talos: {imageFactoryURL: 'https://f.internal/" + strings.Repeat("a", 2029) + "'}}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderChartAs(t, c, rel, vals(t, tc.values), nil)
			requireRefusal(t, err, tc.refusal)
			_, err = renderChartAs(t, c, rel, vals(t, tc.neighbour), nil)
			require.NoError(t, err, "neighbour %s renders", tc.neighbour)
		})
	}
}

// Flow-style YAML of n generated items, for the bounds' rows.
func flowList(n int, format string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(format, i)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

func flowMirrors(hosts, endpoints int) string {
	var out []string
	for i := 0; i < hosts; i++ {
		out = append(out, fmt.Sprintf("h%d.internal: {endpoints: %s}", i, flowList(endpoints, "https://m%d.internal")))
	}
	return "{" + strings.Join(out, ", ") + "}"
}

func flowConfig(hosts int) string {
	var out []string
	for i := 0; i < hosts; i++ {
		out = append(out, fmt.Sprintf("h%d.internal: {auth: {username: u}}", i))
	}
	return "{" + strings.Join(out, ", ") + "}"
}

func flowEntries(n, classes int) string {
	var out []string
	for i := 0; i < n; i++ {
		entry := fmt.Sprintf("{schematicID: s%d, version: v1.13.6", i)
		if classes > 0 {
			entry += ", additionalStorageClasses: " + flowList(classes, "class-%d")
		}
		out = append(out, entry+"}")
	}
	return "[" + strings.Join(out, ", ") + "]"
}

func flowSubjects(n int) string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("{kind: Group, name: g%d}", i))
	}
	return "[" + strings.Join(out, ", ") + "]"
}
