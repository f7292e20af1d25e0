package comparison

import "flag"

// update rewrites the golden files of the words (testdata) from what the comparisons say: the words are
// checked there, the claims by the tests.
var update = flag.Bool("update", false, "rewrite the golden files of the words from what the comparisons say")
