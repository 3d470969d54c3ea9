package contract

// ParseLimit is Parse with another size limit, for benchmarks of inputs
// larger than MaxBytes.
func ParseLimit(data []byte, maxBytes int) (*Contract, error) { return parse(data, maxBytes) }
