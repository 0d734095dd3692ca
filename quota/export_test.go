package quota

// Keys lists every key this limiter may write, for tests' tidy-ups.
func (r *Redis) Keys() []string { return r.keys(r.inst, r.base(r.opts.Costs.Pools, one).Pools) }
