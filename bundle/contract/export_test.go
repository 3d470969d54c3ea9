package contract

// ParseLimit is Parse with another size limit, for benchmarks of inputs
// larger than MaxBytes.
func ParseLimit(data []byte, maxBytes int) (*Contract, error) {
	d := parseDocument(data, maxBytes)
	return d.Contract, d.Err
}
