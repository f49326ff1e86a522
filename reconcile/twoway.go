package reconcile

// twoWayTargets are the targets flowing both ways.
func twoWayTargets(r *Reconciler) []string {
	rev := r.opts.Mapper.ReverseTargets()
	var out []string
	for _, k := range r.opts.Mapper.ForwardTargets() {
		for _, x := range rev {
			if x == k {
				out = append(out, k)
				break
			}
		}
	}
	return out
}
