package stacks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/metrics"
)

// TestFirstDeploy synthesizes a deployment in a region without Origin
// Shield and checks what a first deployment into an empty account meets:
// the shield in the nearest region that has one, scheduled functions that
// start only once the databases are migrated, and alarms that go back to
// OK once a failure is over (so the next failure notifies again).
func TestFirstDeploy(t *testing.T) {
	c := production(t)
	c.Region, c.AZs = "eu-north-1", []string{"eu-north-1a", "eu-north-1b", "eu-north-1c"}
	all, _ := synth(t, c)
	noNagFindings(t, all)

	t.Run("Origin Shield is in the nearest region that offers it", func(t *testing.T) {
		shields := 0
		each(all, "AWS::CloudFront::Distribution", func(_, _ string, r resource) {
			for _, o := range r.Properties["DistributionConfig"].(map[string]any)["Origins"].([]any) {
				if s, ok := o.(map[string]any)["OriginShield"].(map[string]any); ok && s["Enabled"] == true {
					require.Equal(t, "eu-west-2", s["OriginShieldRegion"], "eu-north-1 has no Origin Shield; London is its nearest")
					shields++
				}
			}
		})
		require.Equal(t, 1, shields, "the API's origin is shielded")
	})

	t.Run("every cluster runs the engine version make preflight checks", func(t *testing.T) {
		require.Equal(t, 1+testShards, each(all, "AWS::RDS::DBCluster", func(_, id string, r resource) {
			require.Equal(t, AuroraPostgresVersion, r.Properties["EngineVersion"], id)
		}))
	})

	t.Run("the API reads the search snapshot, only sweep writes it", func(t *testing.T) {
		access := map[string][]string{} // function → actions on the snapshot
		each(all, "AWS::IAM::Policy", func(_, id string, r resource) {
			fn, ok := "", false
			for _, name := range Functions {
				if strings.HasPrefix(id, title(name)+"ServiceRoleDefaultPolicy") {
					fn, ok = name, true
				}
			}
			for _, st := range r.Properties["PolicyDocument"].(map[string]any)["Statement"].([]any) {
				st := st.(map[string]any)
				if !strings.Contains(fmt.Sprint(st["Resource"]), "SearchSnapshots") {
					continue
				}
				require.True(t, ok, "%s: only functions reach the snapshot", id)
				require.Contains(t, fmt.Sprint(st["Resource"]), "/"+SearchSnapshotKey, "%s: the one key, not the bucket", id)
				access[fn] = append(access[fn], fmt.Sprint(st["Action"]))
			}
		})
		require.Equal(t, map[string][]string{"api": {"s3:GetObject"}, "sweep": {"[s3:GetObject s3:PutObject]"}}, access)
		vars := variables(t, all)
		for name, v := range vars {
			_, set := v["CATRACA_SEARCH_SNAPSHOT"]
			require.Equal(t, name == "api" || name == "sweep", set, name)
		}
	})

	t.Run("scheduled functions start once every database is migrated", func(t *testing.T) {
		ops := all["test-ops"]
		var migrations []string
		for id, r := range ops.Resources {
			if r.Type == "Custom::CatracaMigration" {
				migrations = append(migrations, id)
			}
		}
		require.Len(t, migrations, 1+testShards)
		schedules := 0
		each(all, "AWS::Scheduler::Schedule", func(stack, id string, r resource) {
			schedules++
			require.Equal(t, "test-ops", stack, "%s: in the stack that runs the migrations", id)
			deps := ops.dependsOn(id)
			for _, m := range migrations {
				require.Contains(t, deps, m, "%s starts only once %s has run", id, m)
			}
		})
		require.Equal(t, 4, schedules, "admit, sweep, fulfil, reconcile")
	})

	t.Run("every alarm goes back to OK once the failure is over", func(t *testing.T) {
		n := 0
		for id, r := range all["test-ops"].Resources {
			if r.Type != "AWS::CloudWatch::Alarm" {
				continue
			}
			n++
			a := parseAlarm(t, id, r.Properties)
			require.Equal(t, "notBreaching", a.missing, "%s: minutes without data (no failures) are good minutes", id)
			for _, after := range []string{"good values", "no data"} {
				states := a.simulate(t, after)
				require.Equal(t, "ALARM", states[failureMinutes-1], "%s alarms during a failure (%s after)", id, after)
				require.Equal(t, "OK", states[len(states)-1], "%s goes back to OK once the failure is over (%s after): %v", id, after, states)
			}
		}
		require.NotZero(t, n)
	})
}

// dependsOn lists the resources id depends on.
func (tpl template) dependsOn(id string) []string {
	switch d := tpl.Resources[id].DependsOn.(type) {
	case string:
		return []string{d}
	case []any:
		var out []string
		for _, v := range d {
			out = append(out, fmt.Sprint(v))
		}
		return out
	}
	return nil
}

// alarm is a CloudWatch alarm as the template declares it.
type alarm struct {
	id               string
	periods, toAlarm int
	threshold        float64
	comparison       string
	missing          string
	expression       string            // "" for a single metric
	metrics          map[string]string // id → metric name ("" id for a single metric)
	namespace        map[string]string
}

func parseAlarm(t *testing.T, id string, p map[string]any) alarm {
	num := func(v any) float64 {
		f, ok := v.(float64)
		require.True(t, ok, "%s: %v is a number", id, v)
		return f
	}
	a := alarm{id: id, periods: int(num(p["EvaluationPeriods"])), threshold: num(p["Threshold"]),
		comparison: fmt.Sprint(p["ComparisonOperator"]), missing: fmt.Sprint(p["TreatMissingData"]),
		metrics: map[string]string{}, namespace: map[string]string{}}
	a.toAlarm = a.periods
	if v, ok := p["DatapointsToAlarm"]; ok {
		a.toAlarm = int(num(v))
	}
	if name, ok := p["MetricName"].(string); ok {
		a.metrics[""], a.namespace[""] = name, fmt.Sprint(p["Namespace"])
		require.Equal(t, 60.0, num(p["Period"]), "%s: one-minute periods", id)
		return a
	}
	for _, m := range p["Metrics"].([]any) {
		m := m.(map[string]any)
		if e, ok := m["Expression"].(string); ok {
			a.expression = e
			continue
		}
		stat := m["MetricStat"].(map[string]any)
		metric := stat["Metric"].(map[string]any)
		require.Equal(t, 60.0, num(stat["Period"]), "%s: one-minute periods", id)
		a.metrics[fmt.Sprint(m["Id"])], a.namespace[fmt.Sprint(m["Id"])] = fmt.Sprint(metric["MetricName"]), fmt.Sprint(metric["Namespace"])
	}
	return a
}

// failureMinutes is how long the simulated failure lasts: longer than
// any alarm's evaluation periods.
const failureMinutes = 10

// persists tells the metrics whose value stays after the failure that
// raised it: a dead-letter queue's depth keeps its messages for 14 days.
func persists(namespace, name string) bool {
	return namespace == "AWS/SQS" && name == "ApproximateNumberOfMessagesVisible"
}

// value is metric name's datapoint in minute m of the simulation: during
// the failure every failure count is high (and nobody is admitted); after
// it, counts are back to normal ("good values") or nothing is reported
// ("no data"), except what persists, which stays where the failure left it.
func value(namespace, name string, minute int, after string) (float64, bool) {
	if persists(namespace, name) {
		return float64(100 * min(minute+1, failureMinutes)), true // a DLQ fills, then keeps
	}
	failing := minute < failureMinutes
	switch {
	case name == metrics.Admitted && failing:
		return 0, true
	case name == metrics.Admitted:
		return 20, true
	case failing:
		return 1000, true
	case after == "no data":
		return 0, false
	}
	return 0, true
}

// expressions are the CloudWatch metric math our alarms use, evaluated as
// CloudWatch does; a new expression needs its semantics here.
var expressions = map[string]func(cur, prev map[string]*float64) *float64{
	"IF(waiting > 0 AND admitted == 0, 1, 0)": func(cur, _ map[string]*float64) *float64 {
		w, a := cur["waiting"], cur["admitted"]
		if w == nil || a == nil { // IF over a missing value yields none
			return nil
		}
		v := 0.0
		if *w > 0 && *a == 0 {
			v = 1
		}
		return &v
	},
	"DIFF(depth)": func(cur, prev map[string]*float64) *float64 {
		if cur["depth"] == nil || prev["depth"] == nil {
			return nil
		}
		v := *cur["depth"] - *prev["depth"]
		return &v
	},
}

// simulate returns the alarm's state at the end of each minute of a
// failure and the half hour after it.
func (a alarm) simulate(t *testing.T, after string) []string {
	var datapoints []*float64
	prev := map[string]*float64{}
	for minute := 0; minute < failureMinutes+30; minute++ {
		cur := map[string]*float64{}
		for id, name := range a.metrics {
			if v, ok := value(a.namespace[id], name, minute, after); ok {
				cur[id] = &v
			}
		}
		if a.expression == "" {
			datapoints = append(datapoints, cur[""])
		} else {
			eval, ok := expressions[a.expression]
			require.True(t, ok, "%s: the test does not know the expression %q", a.id, a.expression)
			datapoints = append(datapoints, eval(cur, prev))
		}
		prev = cur
	}
	var states []string
	for i := range datapoints {
		breaching := 0
		for _, d := range datapoints[max(0, i-a.periods+1) : i+1] {
			switch {
			case d == nil && a.missing == "breaching":
				breaching++
			case d != nil && a.breaches(*d):
				breaching++
			}
		}
		state := "OK"
		if breaching >= a.toAlarm {
			state = "ALARM"
		}
		states = append(states, state)
	}
	return states
}

func (a alarm) breaches(v float64) bool {
	switch a.comparison {
	case "GreaterThanOrEqualToThreshold":
		return v >= a.threshold
	case "GreaterThanThreshold":
		return v > a.threshold
	case "LessThanThreshold":
		return v < a.threshold
	case "LessThanOrEqualToThreshold":
		return v <= a.threshold
	}
	panic("comparison " + a.comparison)
}
