package kvservice

import "github.com/edgekit/edgekit/fluidos"

// AppTemplate and CredentialsTemplate are the templates of Blueprint: the
// image "kv" (this service) run with the buyer's user name and password, and
// credentials of its endpoint with them.
const (
	AppTemplate = `command: {{ image "kv" | json }}
env_vars:
- name: KV_USERNAME
  value: {{ .Config.username | json }}
- name: KV_PASSWORD
  secret_value: {{ .Config.password | json }}
ports:
- proto: PORT_PROTOCOL_HTTP
  internal_port: 8080
health_check: HEALTH_CHECK_HTTP
health_check_path: /healthz
`
	CredentialsTemplate = `endpoint: {{ printf "http://%s" .Endpoint | json }}
username: {{ .Config.username | json }}
password: {{ .Config.password | json }}
`
)

// Blueprint is a blueprint of a key-value service (category
// "database", tag "kv") selling at most max instances (0: no limit),
// whose buyer chooses a password (8 or more of a-z 0-9 -) and a user name
// (default "admin").
func Blueprint(id string, max uint32) *fluidos.ServiceBlueprint {
	return &fluidos.ServiceBlueprint{
		Id: id, Name: id, Category: "database", Tags: []string{"kv", "cache"}, MaxInstances: max,
		HostingPolicies: []fluidos.HostingPolicy{fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER, fluidos.HostingPolicy_HOSTING_POLICY_SHARED},
		Price:           &fluidos.Price{Amount: "0.10", Currency: "EUR", Period: "hourly"},
		ConfigurationSchema: &fluidos.ConfigurationSchema{Parameters: []*fluidos.ConfigParameter{
			{Name: "username", Type: fluidos.ParameterType_PARAMETER_TYPE_STRING, DefaultValue: "admin", Pattern: "[a-z][a-z0-9]{0,31}"},
			{Name: "password", Type: fluidos.ParameterType_PARAMETER_TYPE_STRING, Required: true, Pattern: "[a-z0-9-]{8,64}"},
		}},
		Templates: []*fluidos.ServiceTemplate{{Name: "app", Body: AppTemplate}, {Name: "credentials", Body: CredentialsTemplate}},
	}
}
