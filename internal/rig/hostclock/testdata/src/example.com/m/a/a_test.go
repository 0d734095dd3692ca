package a

import "time"

func inATest() { _ = time.Now() }
