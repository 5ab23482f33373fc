package agentdef

// fieldCheck validates one frontmatter field the compiler checks but does
// not read: check reports what is wrong with the field's value (name is the
// field's name in diagnostics).
type fieldCheck struct {
	key   string
	check func(d *decoder, v field, name string)
}

// checkFields runs checks, in order, on those of their fields present in f.
func (d *decoder) checkFields(f map[string]field, checks []fieldCheck) {
	for _, c := range checks {
		if v, ok := f[c.key]; ok {
			c.check(d, v, c.key)
		}
	}
}

func checkString(d *decoder, v field, name string)   { d.str(v.value, name) }
func checkNonEmpty(d *decoder, v field, name string) { d.nonEmptyStr(v.value, name) }
func checkBoolean(d *decoder, v field, name string)  { d.boolean(v.value, name) }
func checkMapping(d *decoder, v field, name string)  { d.mapping(v.value, name) }

// checkStringList accepts a list of strings or a single string.
func checkStringList(d *decoder, v field, name string) { d.stringList(v.value, name, true) }

func checkInteger(lo, hi int) func(*decoder, field, string) {
	return func(d *decoder, v field, name string) { d.integer(v.value, name, lo, hi) }
}

func checkNumber(lo, hi float64) func(*decoder, field, string) {
	return func(d *decoder, v field, name string) { d.number(v.value, name, lo, hi) }
}

func checkEnum(values ...string) func(*decoder, field, string) {
	return func(d *decoder, v field, name string) { d.enum(v.value, name, values...) }
}
