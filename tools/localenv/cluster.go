package localenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a local Redis Cluster as ElastiCache Serverless runs one:
// three primaries, one replica each, every node on 127.0.0.1.
type Cluster struct {
	Dir string
	// Ports are the six nodes' client ports; each node's cluster bus is
	// on BusOffset above.
	Ports []int
	// NodeTimeout is how long a primary may be unreachable before its
	// replica takes over (cluster-node-timeout).
	NodeTimeout time.Duration
}

// BusOffset is the distance from a node's client port to its cluster bus.
const BusOffset = 10

// ClusterNodes is how many nodes a Cluster runs.
const ClusterNodes = 6

// NewCluster describes a cluster in dir on ports base..base+5 (their
// buses on base+10..base+15).
func NewCluster(dir string, base int) Cluster {
	c := Cluster{Dir: dir, NodeTimeout: 5 * time.Second}
	for i := range ClusterNodes {
		c.Ports = append(c.Ports, base+i)
	}
	return c
}

// Addrs are the nodes' host:port, for a cluster client's seed list.
func (c Cluster) Addrs() []string {
	out := make([]string, len(c.Ports))
	for i, p := range c.Ports {
		out[i] = fmt.Sprintf("127.0.0.1:%d", p)
	}
	return out
}

func (c Cluster) nodeDir(port int) string { return filepath.Join(c.Dir, strconv.Itoa(port)) }
func (c Cluster) pidFile(port int) string { return filepath.Join(c.nodeDir(port), "redis.pid") }

// Up starts the nodes that are not running, creates the cluster when no
// node has joined one yet, and returns once every node reports
// cluster_state:ok and knows all six (bounded by ctx and a minute).
// Concurrent callers serialize on a file lock in Dir.
func (c Cluster) Up(ctx context.Context) error {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(filepath.Join(c.Dir, ".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	for _, p := range c.Ports {
		if err := c.StartNode(ctx, p); err != nil {
			return err
		}
	}
	fresh := true
	for _, addr := range c.Addrs() {
		info, err := clusterInfo(ctx, addr)
		if err != nil {
			return err
		}
		if info["cluster_known_nodes"] != "1" {
			fresh = false
		}
	}
	if fresh {
		cli, err := exec.LookPath("redis-cli")
		if err != nil {
			return err
		}
		args := append([]string{"--cluster", "create"}, c.Addrs()...)
		if err := run(exec.CommandContext(ctx, cli, append(args, "--cluster-replicas", "1", "--cluster-yes")...)); err != nil {
			return err
		}
	}
	return c.WaitOK(ctx)
}

// WaitOK waits until every node says cluster_state:ok, sees every slot
// served and knows all the nodes, and each of the three primaries has a
// replica in sync: after a create, a restart or a failover, nodes agree
// only after a few gossip rounds (bounded by ctx and a minute).
func (c Cluster) WaitOK(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		err := c.check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redis cluster not ok: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c Cluster) check(ctx context.Context) error {
	primaries, replicas := 0, 0
	for _, addr := range c.Addrs() {
		info, err := clusterInfo(ctx, addr)
		if err != nil {
			return err
		}
		if info["cluster_state"] != "ok" || info["cluster_slots_ok"] != "16384" ||
			info["cluster_known_nodes"] != strconv.Itoa(ClusterNodes) {
			return fmt.Errorf("%s: cluster_state:%s slots_ok:%s known_nodes:%s", addr,
				info["cluster_state"], info["cluster_slots_ok"], info["cluster_known_nodes"])
		}
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		role, err := rdb.Do(ctx, "ROLE").Slice()
		rdb.Close()
		if err != nil {
			return err
		}
		// ROLE: master, offset, its replicas; or slave, primary's host
		// and port, link state, offset.
		switch {
		case role[0] == "master" && len(role) > 2 && len(role[2].([]any)) > 0:
			primaries++
		case role[0] == "slave" && len(role) > 3 && role[3] == "connected":
			replicas++
		}
	}
	if primaries != ClusterNodes/2 || replicas != ClusterNodes/2 {
		return fmt.Errorf("%d primaries with a replica and %d replicas in sync, want %d each", primaries, replicas, ClusterNodes/2)
	}
	return nil
}

// clusterInfo reads CLUSTER INFO of one node, waiting while it loads.
func clusterInfo(ctx context.Context, addr string) (map[string]string, error) {
	if err := waitPing(ctx, addr); err != nil {
		return nil, err
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	s, err := rdb.ClusterInfo(ctx).Result()
	if err != nil {
		return nil, err
	}
	info := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			info[k] = v
		}
	}
	return info, nil
}

// StartNode starts the node on port, in cluster mode with AOF on, unless
// it already runs. A node restarted from its folder rejoins the cluster
// it knew (nodes.conf), as a replica if it was failed over meanwhile.
func (c Cluster) StartNode(ctx context.Context, port int) error {
	if listening(port) {
		return waitPing(ctx, fmt.Sprintf("127.0.0.1:%d", port))
	}
	bin, err := redisServer()
	if err != nil {
		return err
	}
	dir := c.nodeDir(port)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(port+BusOffset),
		"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", strconv.FormatInt(c.NodeTimeout.Milliseconds(), 10),
		"--dir", dir, "--appendonly", "yes", "--appendfsync", "everysec",
		"--save", "", "--daemonize", "yes",
		"--pidfile", c.pidFile(port), "--logfile", filepath.Join(dir, "redis.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := run(cmd); err != nil {
		return err
	}
	return waitPing(ctx, fmt.Sprintf("127.0.0.1:%d", port))
}

// KillNode kills the node on port with SIGKILL, losing what it had not
// yet sent to its replica.
func (c Cluster) KillNode(port int) error {
	return signalPID(c.pidFile(port), port, syscall.SIGKILL)
}

// Down shuts every node down cleanly, keeping the data.
func (c Cluster) Down() error {
	var errs []error
	for _, p := range c.Ports {
		errs = append(errs, signalPID(c.pidFile(p), p, syscall.SIGTERM))
	}
	return errors.Join(errs...)
}

// redisServer finds redis-server, installing it if absent.
func redisServer() (string, error) {
	if bin, err := exec.LookPath("redis-server"); err == nil {
		return bin, nil
	}
	if err := aptInstall("redis-server"); err != nil {
		return "", err
	}
	return exec.LookPath("redis-server")
}

// FreeCluster describes a cluster in dir on six ports free right now (and
// their buses), for a test that kills and fails over its own nodes.
func FreeCluster(dir string) (Cluster, error) {
	for range 50 {
		base, err := FreePort()
		if err != nil {
			return Cluster{}, err
		}
		if base+ClusterNodes+BusOffset > 65535 {
			continue
		}
		c := NewCluster(dir, base)
		if c.portsFree() {
			return c, nil
		}
	}
	return Cluster{}, errors.New("no six free ports with free buses")
}

func (c Cluster) portsFree() bool {
	for _, p := range c.Ports {
		for _, q := range []int{p, p + BusOffset} {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", q))
			if err != nil {
				return false
			}
			l.Close()
		}
	}
	return true
}

// PortOf returns the client port of a node address host:port.
func PortOf(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

// SlotNodes returns the addresses of the primary serving key's slot and
// of its replica ("" while it has none, e.g. while the old primary is
// down), asking the nodes themselves: one that has not heard of the
// replica yet is outvoted by one that has.
func (c Cluster) SlotNodes(ctx context.Context, key string) (primary, replica string, err error) {
	for _, addr := range c.Addrs() {
		n := redis.NewClient(&redis.Options{Addr: addr})
		slot, kerr := n.ClusterKeySlot(ctx, key).Result()
		slots, serr := n.ClusterSlots(ctx).Result()
		n.Close()
		if err = errors.Join(kerr, serr); err != nil {
			continue
		}
		for _, s := range slots {
			if int64(s.Start) <= slot && slot <= int64(s.End) {
				primary = s.Nodes[0].Addr
				if len(s.Nodes) > 1 {
					return primary, s.Nodes[1].Addr, nil
				}
			}
		}
	}
	if primary == "" {
		return "", "", fmt.Errorf("no node serves the slot of %s: %w", key, err)
	}
	return primary, "", nil
}

// Failover makes the replica of key's slot its primary with CLUSTER
// FAILOVER (which waits until the replica has every write) and returns
// once the nodes agree.
func (c Cluster) Failover(ctx context.Context, key string) error {
	_, replica, err := c.SlotNodes(ctx, key)
	if err != nil {
		return err
	}
	if replica == "" {
		return fmt.Errorf("the slot of %s has no replica", key)
	}
	n := redis.NewClient(&redis.Options{Addr: replica})
	defer n.Close()
	if err := n.ClusterFailover(ctx).Err(); err != nil {
		return err
	}
	return c.WaitOK(ctx)
}
