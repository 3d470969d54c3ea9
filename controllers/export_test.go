package controllers

// PodsReport is podsReport, for the table test of the external test
// package.
var PodsReport = podsReport
