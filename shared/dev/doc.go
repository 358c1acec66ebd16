// Package dev marks the development and test tools: the in-process stack,
// simulators, local and test servers, clients and demo data. Nothing under
// shared/dev ships in a Lambda; production code lives in the other packages
// of shared/, and a test keeps the functions from importing these.
package dev
