package nodetest

import "github.com/edgekit/edgekit/fluidos"

// RefDatabaseBlueprint is a database-like blueprint written in the FLUIDOS
// reference's format (templates of Kubernetes manifests over the buyer's
// configuration): a Secret db-credentials of the buyer's username,
// password and database, a Service db-service on port 3306 labelled as
// the endpoint, and a Deployment db of mysql:5.7 reading the Secret. A
// node deploys it on a Kubernetes cloudlet; at most max instances are
// sold at once (0: no limit).
func RefDatabaseBlueprint(id string, max uint32) *fluidos.ServiceBlueprint {
	return &fluidos.ServiceBlueprint{
		Id: id, Name: "MySQL", Description: "a MySQL database", Category: "database", Tags: []string{"mysql"},
		HostingPolicies: []fluidos.HostingPolicy{fluidos.HostingPolicy_HOSTING_POLICY_PROVIDER},
		MaxInstances:    max,
		ConfigurationSchema: &fluidos.ConfigurationSchema{Parameters: []*fluidos.ConfigParameter{
			{Name: "username", Type: fluidos.ParameterType_PARAMETER_TYPE_STRING, Required: true},
			{Name: "password", Type: fluidos.ParameterType_PARAMETER_TYPE_STRING, Required: true},
			{Name: "database", Type: fluidos.ParameterType_PARAMETER_TYPE_STRING, DefaultValue: "app"},
		}},
		Templates: []*fluidos.ServiceTemplate{{Name: "mysql", Description: "MySQL 5.7 with its credentials", ServiceData: RefDatabaseManifests}},
	}
}

// RefDatabaseManifests are the manifests of RefDatabaseBlueprint.
const RefDatabaseManifests = `apiVersion: v1
kind: Secret
metadata:
  name: db-credentials
type: Opaque
stringData:
  username: "{{ .username }}"
  password: "{{ .password }}"
  database: "{{ .database }}"
---
apiVersion: v1
kind: Service
metadata:
  name: db-service
  labels:
    nodecore.fluidos.eu/flavor-service-endpoint: "true"
spec:
  selector:
    app: db
  ports:
  - name: mysql
    port: 3306
    targetPort: 3306
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
spec:
  replicas: 1
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
      - name: mysql
        image: mysql:5.7
        ports:
        - containerPort: 3306
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: 500m, memory: 512Mi}
        env:
        - name: MYSQL_USER
          valueFrom: {secretKeyRef: {name: db-credentials, key: username}}
        - name: MYSQL_PASSWORD
          valueFrom: {secretKeyRef: {name: db-credentials, key: password}}
        - name: MYSQL_DATABASE
          valueFrom: {secretKeyRef: {name: db-credentials, key: database}}
        - name: MYSQL_RANDOM_ROOT_PASSWORD
          value: "yes"
`
