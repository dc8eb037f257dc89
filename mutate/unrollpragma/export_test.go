package unrollpragma

// Placement exposes placement to the external tests.
var Placement = placement
