package app

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
)

// TestIAMAuthLogsInAsTheRoleWithAToken: with DBIAMAuth a pool logs in as
// DBUser, whatever user the DSN names, with a fresh RDS IAM token signed
// for the host it connects to (rds-db, the function's credentials) as its
// password; without DBUser it refuses to start.
func TestIAMAuthLogsInAsTheRoleWithAToken(t *testing.T) {
	iam := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
	c := config.Database{DBMaxConns: 1, DBProxy: true, DBUser: config.DBRole("sweep"), DBIAMAuth: true}
	pc, err := poolConfig(c, "postgres://someone@proxy.example:5432/catraca_shard_1?sslmode=require", true, iam)
	require.NoError(t, err)
	require.Equal(t, "catraca_sweep", pc.ConnConfig.User)
	require.Empty(t, pc.ConnConfig.Password)
	require.NotNil(t, pc.BeforeConnect)
	cc := pc.ConnConfig.Copy()
	require.NoError(t, pc.BeforeConnect(context.Background(), cc))
	token, err := url.Parse("https://" + cc.Password)
	require.NoError(t, err)
	require.Equal(t, "proxy.example:5432", token.Host)
	q := token.Query()
	require.Equal(t, "connect", q.Get("Action"))
	require.Equal(t, "catraca_sweep", q.Get("DBUser"))
	require.True(t, strings.HasPrefix(q.Get("X-Amz-Credential"), "AKIDEXAMPLE/"), q.Get("X-Amz-Credential"))
	require.Contains(t, q.Get("X-Amz-Credential"), "/eu-west-1/rds-db/aws4_request")
	require.NotEmpty(t, q.Get("X-Amz-Signature"))

	c.DBUser = ""
	_, err = poolConfig(c, "postgres://proxy.example:5432/catraca_shard_1", true, iam)
	require.ErrorContains(t, err, "CATRACA_DB_USER")
}
