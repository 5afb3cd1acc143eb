// Package journeys holds the journey suite: short scripts of what a user
// does with wield, each run against the real wield binary built from this
// tree, with real files on disk and real PostgreSQL and Redis where the
// journey uses them. The package has no code of its own; its tests are the
// suite (go test ./journeys/).
//
// Each journey asserts what the user would check with their eyes: what was
// printed, the exit code, the record, and how long the program took to exit.
// Journeys run one after another, but for those that spend seconds waiting
// on their programs (a task's lease, a grace period, a tool's nap): they
// call t.Parallel and run four at a time unless -parallel is given
// (waitBound in harness_test.go).
// The examples of the source documents wield implements are kept byte for
// byte under testdata/ and used as written (TestExamplesVerbatim checks them
// against the documents where those are beside the checkout).
package journeys
