package structs

// copyWith is the frame of the Copy and Sanitized methods: nil stays nil, otherwise a shallow
// copy of *p that adjust (when set) deepens or redacts before it is returned.
func copyWith[T any](p *T, adjust func(c *T)) *T {
	if p == nil {
		return nil
	}
	c := *p
	if adjust != nil {
		adjust(&c)
	}
	return &c
}
