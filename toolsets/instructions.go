package toolsets

import "strings"

// RenderInstructions renders instructions for a system prompt, one section
// per group in order of first appearance, each line once per group:
//
//	## workspace
//	- Prefer exact local facts over assumptions.
//
// Instructions with an empty group are rendered first, without a heading.
func RenderInstructions(instructions []Instruction) string {
	var groups []string
	lines := map[string][]string{}
	seen := map[Instruction]bool{}
	for _, in := range instructions {
		if seen[in] || strings.TrimSpace(in.Text) == "" {
			continue
		}
		seen[in] = true
		if _, ok := lines[in.Group]; !ok {
			groups = append(groups, in.Group)
		}
		lines[in.Group] = append(lines[in.Group], in.Text)
	}
	var b strings.Builder
	write := func(g string) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		if g != "" {
			b.WriteString("## " + g + "\n")
		}
		for _, l := range lines[g] {
			b.WriteString("- " + l + "\n")
		}
	}
	if _, ok := lines[""]; ok {
		write("")
	}
	for _, g := range groups {
		if g != "" {
			write(g)
		}
	}
	return b.String()
}

// Instructions returns the registered toolsets' instructions rendered by
// [RenderInstructions].
func (r *Registry) Instructions() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return RenderInstructions(r.instructions)
}
