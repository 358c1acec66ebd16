package stacks

// AuroraPostgresVersion is the engine version of every cluster
// (data.go; make preflight checks the region offers it).
const AuroraPostgresVersion = "16.4"
