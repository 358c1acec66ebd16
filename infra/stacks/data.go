package stacks

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awselasticache"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsrds"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// DataStackProps sizes the databases and the cache.
type DataStackProps struct {
	awscdk.StackProps
	Vpc        awsec2.IVpc
	Shards     int
	Production bool
	// PreSaleECPU is the cache's minimum ECPU/s; raise it before a big
	// on-sale (see docs/capacity.md) so the first second is not throttled.
	PreSaleECPU float64
}

// dbUser is the clusters' master user; its password is generated.
const dbUser = "catraca"

// Database is one Aurora cluster and the RDS Proxy in front of it.
type Database struct {
	Name    string // database name inside the cluster
	Cluster awsrds.DatabaseCluster
	Proxy   awsrds.DatabaseProxy
	// ReadHost is the proxy's read-only endpoint: the cluster's readers,
	// multiplexed like the writer.
	ReadHost *string
}

// DataStack holds the catalog, the event shards and the cache.
type DataStack struct {
	awscdk.Stack
	Catalog   Database
	Shards    []Database
	CacheHost *string
	ClientsSG awsec2.SecurityGroup // functions join it to reach data
	// Topology holds the DSN of every database (their passwords stay
	// placeholders of the clusters' secrets): with eight shards the DSNs
	// alone would pass Lambda's 4 KB environment, so the environment only
	// refers to its fields (TopologyFields), read once per cold start.
	Topology awssecretsmanager.Secret
	// TopologyUses are the cluster secrets each field of Topology refers to.
	TopologyUses map[string][]awssecretsmanager.ISecret
	dataAccess   awsec2.SecurityGroup
}

// The fields of the topology secret.
const (
	TopologyCatalog     = "catalog"
	TopologyCatalogRead = "catalog_read"
	TopologyShards      = "shards"
	TopologyShardReads  = "shard_reads"
)

// NewDataStack creates one Aurora PostgreSQL Serverless v2 cluster for the
// catalog and one per shard, each with a writer and a reader (the read
// path's snapshots), an RDS Proxy and generated credentials; and an
// ElastiCache Serverless (Valkey) cache. Nothing is reachable from outside
// the VPC; everything is encrypted at rest.
func NewDataStack(scope constructs.Construct, id string, props *DataStackProps) *DataStack {
	st := awscdk.NewStack(scope, &id, &props.StackProps)
	d := &DataStack{Stack: st}
	d.ClientsSG = awsec2.NewSecurityGroup(st, jsii.String("Clients"), &awsec2.SecurityGroupProps{Vpc: props.Vpc,
		Description: jsii.String("catraca functions that use the databases and the cache"), AllowAllOutbound: jsii.Bool(true)})
	d.dataAccess = awsec2.NewSecurityGroup(st, jsii.String("Data"), &awsec2.SecurityGroupProps{Vpc: props.Vpc,
		Description: jsii.String("catraca databases, proxies and cache"), AllowAllOutbound: jsii.Bool(false)})
	d.dataAccess.AddIngressRule(d.ClientsSG, awsec2.Port_Tcp(jsii.Number(5432)), jsii.String("PostgreSQL from functions"), nil)
	d.dataAccess.AddIngressRule(d.dataAccess, awsec2.Port_Tcp(jsii.Number(5432)), jsii.String("proxy to cluster"), nil)
	d.dataAccess.AddIngressRule(d.ClientsSG, awsec2.Port_TcpRange(jsii.Number(6379), jsii.Number(6380)), jsii.String("Valkey from functions"), nil)

	d.Catalog = d.database(props, "Catalog", "catraca_catalog")
	for i := 1; i <= props.Shards; i++ {
		d.Shards = append(d.Shards, d.database(props, fmt.Sprintf("Shard%d", i), fmt.Sprintf("catraca_shard_%d", i)))
	}

	isolated := props.Vpc.SelectSubnets(&awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED})
	minECPU := props.PreSaleECPU
	if minECPU == 0 {
		minECPU = 1000
	}
	cache := awselasticache.NewCfnServerlessCache(st, jsii.String("Cache"), &awselasticache.CfnServerlessCacheProps{
		ServerlessCacheName: jsii.String(id + "-cache"),
		Engine:              jsii.String("valkey"),
		MajorEngineVersion:  jsii.String("8"),
		SecurityGroupIds:    &[]any{d.dataAccess.SecurityGroupId()},
		SubnetIds:           anyList(isolated.SubnetIds),
		CacheUsageLimits: &awselasticache.CfnServerlessCache_CacheUsageLimitsProperty{
			DataStorage: &awselasticache.CfnServerlessCache_DataStorageProperty{Maximum: jsii.Number(20), Unit: jsii.String("GB")},
			EcpuPerSecond: &awselasticache.CfnServerlessCache_ECPUPerSecondProperty{
				Minimum: jsii.Number(minECPU), Maximum: jsii.Number(5_000_000)},
		},
		SnapshotRetentionLimit: jsii.Number(1),
	})
	d.CacheHost = cache.AttrEndpointAddress()
	d.topology()
	return d
}

// Databases are the catalog and the shards.
func (d *DataStack) Databases() []Database { return append([]Database{d.Catalog}, d.Shards...) }

// PinnedSessions is the most database connections the proxy held pinned to
// one client session in a minute (AWS/RDS DatabaseConnectionsCurrentlySessionPinned).
// The functions send nothing that pins (docs/database.md), and migrate,
// whose session lock would, reaches the clusters directly: pinned
// connections for minutes on end mean a change brought session state in
// and the proxy stopped multiplexing.
func (db Database) PinnedSessions() awscloudwatch.IMetric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String("AWS/RDS"),
		MetricName:    jsii.String("DatabaseConnectionsCurrentlySessionPinned"),
		DimensionsMap: &map[string]*string{"ProxyName": db.Proxy.DbProxyName()},
		Statistic:     jsii.String("Maximum"), Period: awscdk.Duration_Minutes(jsii.Number(1))})
}

// PinnedMinutes is how long pinned connections may last before
// PinnedSessions alarms: longer than any deployment's migrations.
const PinnedMinutes = 5

// topologyField is a dynamic reference to a field of the Topology secret.
func (d *DataStack) topologyField(field string) string {
	return "{{secret:" + *d.Topology.SecretArn() + "#" + field + "}}"
}

// topology writes every DSN into the Topology secret.
func (d *DataStack) topology() {
	var shards, reads []string
	var shardSecrets []awssecretsmanager.ISecret
	var owners []string
	for i, db := range d.Shards {
		shards = append(shards, fmt.Sprintf("%d=%s", i+1, functionDSN(db, db.Proxy.Endpoint())))
		reads = append(reads, fmt.Sprintf("%d=%s", i+1, functionDSN(db, db.ReadHost)))
		owners = append(owners, fmt.Sprintf("%d=%s", i+1, ownerDSN(db)))
		shardSecrets = append(shardSecrets, db.Cluster.Secret())
	}
	fields, _ := json.Marshal(map[string]string{
		TopologyCatalog:      functionDSN(d.Catalog, d.Catalog.Proxy.Endpoint()),
		TopologyCatalogRead:  functionDSN(d.Catalog, d.Catalog.ReadHost),
		TopologyShards:       strings.Join(shards, ","),
		TopologyShardReads:   strings.Join(reads, ","),
		TopologyOwnerCatalog: ownerDSN(d.Catalog),
		TopologyOwnerShards:  strings.Join(owners, ","),
	})
	// Only the owner's fields name a secret: the functions' log in by IAM.
	d.TopologyUses = map[string][]awssecretsmanager.ISecret{
		TopologyOwnerCatalog: {d.Catalog.Cluster.Secret()}, TopologyOwnerShards: shardSecrets}
	d.Topology = awssecretsmanager.NewSecret(d.Stack, jsii.String("Topology"), &awssecretsmanager.SecretProps{
		Description: jsii.String("catraca databases: DSN per database; the owner's passwords as placeholders of each cluster's secret"),
		// Not a credential: the DSNs hold no password, only references.
		SecretStringValue: awscdk.SecretValue_UnsafePlainText(jsii.String(string(fields))),
	})
	suppress(d.Topology, "not a credential: the DSNs name each cluster's own secret instead of a password, and change with the stack", "AwsSolutions-SMG4")
}

func (d *DataStack) database(props *DataStackProps, id, name string) Database {
	removal := awscdk.RemovalPolicy_DESTROY
	retention := 1.0
	if props.Production {
		removal, retention = awscdk.RemovalPolicy_SNAPSHOT, 14
	}
	cluster := awsrds.NewDatabaseCluster(d.Stack, jsii.String(id), &awsrds.DatabaseClusterProps{
		Engine: awsrds.DatabaseClusterEngine_AuroraPostgres(&awsrds.AuroraPostgresClusterEngineProps{
			Version: awsrds.AuroraPostgresEngineVersion_VER_16_4()}),
		DefaultDatabaseName: jsii.String(name),
		Credentials: awsrds.Credentials_FromGeneratedSecret(jsii.String(dbUser), &awsrds.CredentialsBaseOptions{
			ExcludeCharacters: jsii.String(" %+~`#$&*()|[]{}:;<>?!'/@\"\\,=^")}),
		Writer:                  awsrds.ClusterInstance_ServerlessV2(jsii.String("writer"), nil),
		Readers:                 &[]awsrds.IClusterInstance{awsrds.ClusterInstance_ServerlessV2(jsii.String("reader"), &awsrds.ServerlessV2ClusterInstanceProps{ScaleWithWriter: jsii.Bool(true)})},
		ServerlessV2MinCapacity: jsii.Number(0.5),
		ServerlessV2MaxCapacity: jsii.Number(64),
		Vpc:                     props.Vpc,
		VpcSubnets:              &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED},
		SecurityGroups:          &[]awsec2.ISecurityGroup{d.dataAccess},
		StorageEncrypted:        jsii.Bool(true),
		Backup:                  &awsrds.BackupProps{Retention: awscdk.Duration_Days(jsii.Number(retention))},
		DeletionProtection:      jsii.Bool(props.Production),
		RemovalPolicy:           removal,
		// The proxies log in by IAM as the functions' roles (dbroles.go);
		// migrate logs in with the generated secret.
		IamAuthentication:     jsii.Bool(true),
		CloudwatchLogsExports: jsii.Strings("postgresql"),
		MonitoringInterval:    awscdk.Duration_Seconds(jsii.Number(60)),
	})
	proxy := cluster.AddProxy(jsii.String("Proxy"), &awsrds.DatabaseProxyOptions{
		DefaultAuthScheme: proxyAuth,
		Role:              d.proxyRole(id, cluster),
		Vpc:               props.Vpc,
		VpcSubnets:        &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED},
		SecurityGroups:    &[]awsec2.ISecurityGroup{d.dataAccess},
		RequireTLS:        jsii.Bool(true),
		DbProxyName:       jsii.String(*d.Stack.StackName() + "-" + strings.ToLower(id)),
		// Lambdas keep a small pool each; the proxy multiplexes them onto
		// at most this share of the cluster's connections.
		MaxConnectionsPercent: jsii.Number(90),
	})
	readOnly := awsrds.NewCfnDBProxyEndpoint(d.Stack, jsii.String(id+"ProxyReadOnly"), &awsrds.CfnDBProxyEndpointProps{
		DbProxyName:         proxy.DbProxyName(),
		DbProxyEndpointName: jsii.String(*d.Stack.StackName() + "-" + strings.ToLower(id) + "-ro"),
		TargetRole:          jsii.String("READ_ONLY"),
		VpcSubnetIds:        anyList(props.Vpc.SelectSubnets(&awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED}).SubnetIds),
		VpcSecurityGroupIds: &[]any{d.dataAccess.SecurityGroupId()},
	})
	suppress(cluster, "the master password is migrate's alone (the functions log in by IAM), read at its cold start: "+
		"rotate in a maintenance window and redeploy (docs/deploy.md)", "AwsSolutions-SMG4")
	if !props.Production {
		suppress(cluster, "a trial deployment (production=false) must be destroyable; production turns deletion protection on", "AwsSolutions-RDS10")
	}
	suppress(cluster, "AmazonRDSEnhancedMonitoringRole is the policy RDS documents for its enhanced-monitoring role", "AwsSolutions-IAM4")
	return Database{Name: name, Cluster: cluster, Proxy: proxy, ReadHost: readOnly.AttrEndpoint()}
}

// strings adapts a jsii string list to an L1 "list" property.
func anyList(in *[]*string) *[]any {
	out := make([]any, len(*in))
	for i, s := range *in {
		out[i] = s
	}
	return &out
}
