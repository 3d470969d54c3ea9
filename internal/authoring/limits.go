package authoring

import "fmt"

// MaxArgumentValues bounds one structured argument (metadata, interfaces,
// config_properties, …): the keys, items and values it holds, counted
// before anything is checked further or any YAML produced. Real contracts
// hold a few dozen; the bound keeps a call's work small whatever a client
// sends.
const MaxArgumentValues = 10_000

// checkArgumentSize refuses a structured argument holding n keys, items
// and values when n is over MaxArgumentValues.
func checkArgumentSize(field string, n int) error {
	if n > MaxArgumentValues {
		return argError(field, fmt.Sprintf("%q holds more than %d keys, items and values; the limit is %d per argument", field, MaxArgumentValues, MaxArgumentValues))
	}
	return nil
}

// countOrdered counts the keys, items and values of an ordered JSON value,
// as a JSON tokenizer would: each value once, each key once.
func countOrdered(v any) int {
	switch t := v.(type) {
	case *object:
		n := 1
		for _, m := range t.members {
			n += 1 + countOrdered(m.value)
		}
		return n
	case []any:
		n := 1
		for _, e := range t {
			n += countOrdered(e)
		}
		return n
	}
	return 1
}
