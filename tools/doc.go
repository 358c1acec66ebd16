// Package tools holds the development and test tools: the in-process stack,
// simulators, local and test servers, clients and demo data. Nothing under
// tools ships in a Lambda; production code lives in shared/ and functions/
// and a test keeps the functions from importing these.
package tools
