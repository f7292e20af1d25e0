// Package comparison is the one model behind compare, merge and check: the key that says which jobs of two
// results are the same job, the rules that say when a figure moved by more than noise and the tolerance,
// and the three judgements made with them, Compare (a run against a baseline), Merge (many nodes against
// their group's median) and CheckHealth (a run against recorded expectations), with Baseline, the one rule
// of which expectations are a baseline at all. It imports only the result model and units; package report
// renders what it returns, and the commands are thin front ends.
package comparison
