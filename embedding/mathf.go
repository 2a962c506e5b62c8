package embedding

import "math"

// expf is e^x in single precision, to within a few units in the last place
// (Cephes' expf): the softmax of attention calls it once per pair of tokens
// per head, where math.Exp's double precision is wasted.
func expf(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	if x > 88.3762626647949 {
		return float32(math.Inf(1))
	}
	if x < -87.3 {
		return 0
	}
	// x = n·ln 2 + r, |r| ≤ ln 2 / 2; e^x = 2^n · e^r.
	n := float32(math.Floor(float64(x*log2e + 0.5)))
	r := x - n*ln2hi - n*ln2lo
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	e := p*r*r + r + 1
	return math.Float32frombits(math.Float32bits(e) + uint32(int32(n))<<23)
}

// gelu is BERT's activation, x·Φ(x) with the exact normal distribution.
func gelu(x float32) float32 {
	return 0.5 * x * (1 + erff(x*(1/math.Sqrt2)))
}

// geluAll applies gelu to every value of x, eight at a time where the
// processor has AVX2.
func geluAll(x []float32) {
	i := 0
	if useAVX2 && len(x) >= 8 {
		i = len(x) &^ 7
		geluAVX2(&x[0], i)
	}
	for ; i < len(x); i++ {
		x[i] = gelu(x[i])
	}
}

// erff is the error function to within 5e-7 (Abramowitz and Stegun
// 7.1.26), three times as fast as math.Erf, which was a quarter of the
// encoder's time.
func erff(x float32) float32 {
	const (
		p  = 0.3275911
		a1 = 0.254829592
		a2 = -0.284496736
		a3 = 1.421413741
		a4 = -1.453152027
		a5 = 1.061405429
	)
	ax := x
	if ax < 0 {
		ax = -ax
	}
	if ax > 4 {
		ax = 4 // erf(4) is 1 in single precision
	}
	t := 1 / (1 + p*ax)
	y := 1 - (((((a5*t+a4)*t+a3)*t+a2)*t+a1)*t)*expf(-ax*ax)
	if x < 0 {
		return -y
	}
	return y
}

// layerNorm normalises each row of x (rows of len(gamma) values) to zero
// mean and unit variance, then scales and shifts it. Four rows at a time
// have their sums taken side by side: each is a chain of additions, one
// waiting on the one before, and a row alone left the processor idle
// most of the time (a query's normalisations took 8% of its vector).
// Each row's own additions stay in order, so its values are those it
// has normalised alone (TestLayerNormRows); its products are rounded
// before they are added, which without fused multiply-adds they are.
// The scaling and shifting, value by value, is done eight values at a
// time where the processor has AVX2, with the same operations.
func layerNorm(x, gamma, beta []float32, eps float32) {
	h := len(gamma)
	n := len(x) / h
	for r := 0; r < n; r += 4 {
		// The last rows fewer than four stand in for the missing ones:
		// their sums, taken twice side by side, are the same.
		row := func(i int) []float32 {
			i = min(r+i, n-1)
			return x[i*h : (i+1)*h : (i+1)*h]
		}
		mean, inv := rowStats4(row(0), row(1), row(2), row(3), eps)
		for i := range min(4, n-r) {
			normalizeRow(row(i), mean[i], inv[i], gamma, beta)
		}
	}
}

// rowStats4 returns the means of rows r0–r3, which have the same length,
// and the inverses of their standard deviations with eps added to the
// variance, their sums taken side by side; rows may be the same row.
func rowStats4(r0, r1, r2, r3 []float32, eps float32) (mean, inv [4]float32) {
	h := len(r0)
	r1, r2, r3 = r1[:h], r2[:h], r3[:h]
	var s0, s1, s2, s3 float32
	for i := range h {
		s0 += r0[i]
		s1 += r1[i]
		s2 += r2[i]
		s3 += r3[i]
	}
	m0, m1, m2, m3 := s0/float32(h), s1/float32(h), s2/float32(h), s3/float32(h)
	var q0, q1, q2, q3 float32
	for i := range h {
		d0, d1, d2, d3 := r0[i]-m0, r1[i]-m1, r2[i]-m2, r3[i]-m3
		q0 += float32(d0 * d0)
		q1 += float32(d1 * d1)
		q2 += float32(d2 * d2)
		q3 += float32(d3 * d3)
	}
	invOf := func(q float32) float32 { return float32(1 / math.Sqrt(float64(q/float32(h)+eps))) }
	return [4]float32{m0, m1, m2, m3}, [4]float32{invOf(q0), invOf(q1), invOf(q2), invOf(q3)}
}

// normalizeRow sets each value v of row to scaleShift(v-mean, inv,
// gamma's, beta's).
func normalizeRow(row []float32, mean, inv float32, gamma, beta []float32) {
	row = row[:len(gamma)]
	i := 0
	if useAVX2 && len(row) >= 8 {
		i = len(row) &^ 7
		normalizeAVX2(&row[0], i, mean, inv, &gamma[0], &beta[0])
	}
	for ; i < len(row); i++ {
		row[i] = scaleShift(row[i]-mean, inv, gamma[i], beta[i])
	}
}

// scaleShift is d·inv·g + b, each operation rounded: the conversions keep
// the compiler from fusing a multiplication and an addition
// (GOAMD64=v3), so that a row's values do not depend on how it was
// compiled, and normalizeAVX2 gives the same.
func scaleShift(d, inv, g, b float32) float32 {
	return float32(float32(d*inv)*g) + b
}

// softmax turns row into probabilities in place.
func softmax(row []float32) {
	hi := float32(math.Inf(-1))
	for _, v := range row {
		hi = max(hi, v)
	}
	var sum float32
	for i, v := range row {
		e := expf(v - hi)
		row[i] = e
		sum += e
	}
	inv := 1 / sum
	for i := range row {
		row[i] *= inv
	}
}

// normalize scales v to unit length; the zero vector stays zero.
func normalize(v []float32) {
	var sq float64
	for _, x := range v {
		sq += float64(x) * float64(x)
	}
	if sq == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(sq))
	for i := range v {
		v[i] *= inv
	}
}
