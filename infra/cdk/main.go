// Command cdk is the CDK app (cdk.json runs it): it reads the deployment's
// settings from CDK context and declares every stack of infra/stacks.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/catraca/catraca/infra/stacks"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	str := func(key, def string) string {
		if v, ok := app.Node().TryGetContext(jsii.String(key)).(string); ok && v != "" {
			return v
		}
		return def
	}
	num := func(key string, def int) int {
		n, err := strconv.Atoi(str(key, strconv.Itoa(def)))
		if err != nil {
			fmt.Fprintf(os.Stderr, "context %s must be a number\n", key)
			os.Exit(2)
		}
		return n
	}
	var azs []string
	if v := str("azs", ""); v != "" {
		azs = strings.Split(v, ",")
	}
	stacks.Build(app, stacks.Config{
		Name: str("name", "catraca"),
		// The CLI sets CDK_DEFAULT_* from your credentials; context wins
		// (make synth names an example environment to work offline).
		Account:        str("account", os.Getenv("CDK_DEFAULT_ACCOUNT")),
		Region:         str("region", os.Getenv("CDK_DEFAULT_REGION")),
		AZs:            azs,
		Shards:         num("shards", 2),
		Production:     str("production", "false") == "true",
		Dist:           str("dist", "dist"),
		Migrations:     "shared/migrate",
		Site:           "edge/web",
		PublicURL:      str("publicUrl", ""),
		Domain:         str("domain", ""),
		CertificateArn: str("certificateArn", ""),
		PSPURL:         str("pspUrl", "https://api.stripe.com"),
		PSPRate:        num("pspRate", 90),
		PSPConcurrency: num("pspConcurrency", 5),
		// docs/deploy.md: reserve for the API before a big on-sale.
		APIConcurrency:   num("apiConcurrency", 0),
		AdmitConcurrency: num("admitConcurrency", 2),
		MailFrom:         str("mailFrom", ""),
		AlarmEmail:       str("alarmEmail", ""),
		PreSaleECPU:      float64(num("preSaleEcpu", 1000)),
	})
	app.Synth(nil)
}
