package stacks

import (
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsrds"
	"github.com/aws/jsii-runtime-go"

	"github.com/catraca/catraca/shared/config"
)

// Who logs in to the databases as whom (docs/database.md): every function
// but migrate logs in through the RDS Proxies as its own database role
// (config.DBRole, created with its grants by the migrations) with an IAM
// authentication token, and the proxies log in to the clusters by IAM as
// well (end-to-end IAM authentication): no function holds a database
// password, and a function's IAM role names the one database user it may
// be. migrate alone reads the clusters' master secrets, and reaches each
// cluster's writer directly, as the owner of every table.

// The topology fields of the owner (migrate): the clusters' writers, as
// the master user.
const (
	TopologyOwnerCatalog = "owner_catalog"
	TopologyOwnerShards  = "owner_shards"
)

// functionDSN is the address of db through host (a proxy endpoint) with
// no user and no password: the function logs in as its role
// (CATRACA_DB_USER) with an IAM token (CATRACA_DB_IAM_AUTH).
func functionDSN(db Database, host *string) string {
	return fmt.Sprintf("postgres://%s:5432/%s?sslmode=require", *host, db.Name)
}

// ownerDSN is the address of db's cluster writer as the master user (dbUser),
// the password a placeholder of the cluster's secret. Not through the
// proxy: migrations hold a session lock, which would pin a proxy session.
func ownerDSN(db Database) string {
	return fmt.Sprintf("postgres://%s:{{secret:%s#password}}@%s:5432/%s?sslmode=require",
		dbUser, *db.Cluster.Secret().SecretArn(), *db.Cluster.ClusterEndpoint().Hostname(), db.Name)
}

// proxyRole is the role a proxy of cluster logs in with: rds-db:connect as
// each function's database role, no secret (AWS's end-to-end IAM policy
// names the cluster's resource id and the user).
func (d *DataStack) proxyRole(id string, cluster awsrds.DatabaseCluster) awsiam.Role {
	st := d.Stack
	role := awsiam.NewRole(st, jsii.String(id+"ProxyRole"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("rds.amazonaws.com"), nil)})
	var users []*string
	for _, user := range slices.Sorted(maps.Values(config.DBRoles())) {
		users = append(users, jsii.String(fmt.Sprintf("arn:%s:rds-db:%s:%s:dbuser:%s/%s",
			*st.Partition(), *st.Region(), *st.Account(), *cluster.ClusterResourceIdentifier(), user)))
	}
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("rds-db:connect"), Resources: &users}))
	return role
}

// proxyAuth is how the proxies authenticate: IAM end to end.
const proxyAuth = awsrds.DefaultAuthScheme_IAM_AUTH

// databaseValues are the database variables function name gets: the
// owner's DSNs for migrate, its role and IAM authentication for the rest.
func databaseValues(name string, v map[string]string, topology func(field string) string) {
	if name == config.Owner {
		v["CATRACA_CATALOG_DSN"] = topology(TopologyOwnerCatalog)
		v["CATRACA_SHARD_DSNS"] = topology(TopologyOwnerShards)
		return
	}
	v["CATRACA_DB_USER"] = config.DBRole(name)
	v["CATRACA_DB_IAM_AUTH"] = "true"
}

// grantDatabases lets fn log in through every proxy as its function's
// database role (migrate reads the master secrets instead, through the
// topology fields it names).
func grantDatabases(props *AppStackProps, fn awslambda.Function, env map[string]*string) {
	if env["CATRACA_DB_USER"] == nil {
		return
	}
	for _, db := range props.Data.Databases() {
		db.Proxy.GrantConnect(fn, env["CATRACA_DB_USER"])
	}
}
