// The censored Beta synthesizer (Censor_uw) as a Stan program, for benchmarks/bench_vs_stan.py.
//
// It re-expresses the model of the censoring paper's supplement, section "S2 Stan script for the
// censoring method for the beta synthesizer used in Section 4", with every record weight equal to
// one: the same priors, the same Beta likelihood in its (phi, lam) form, and the same censoring of
// each record's log-density to [-M, M] (M = eps / 2) before the records are summed. It is also the
// model dpsynth samples (src/dpsynth/models/beta.py through src/dpsynth/likelihood.py), so both
// sides of the benchmark compute the same posterior. Only the posterior is sampled: no generated
// quantities (dpsynth's refit computes its record log-likelihood matrix outside the sampler).
//
// The log-density is written over the whole data vector, with log(x) and log(1 - x) computed once
// as data, which is how one writes it for speed in Stan (dpsynth also passes them as data).
data {
  int<lower=1> n;                      // number of records
  vector<lower=0, upper=1>[n] x;       // the confidential values, in (0, 1)
  real<lower=0> M;                     // censoring bound on each record's log-density, eps / 2
}

transformed data {
  vector[n] log_x = log(x);
  vector[n] log_1mx = log1m(x);
}

parameters {
  real<lower=0, upper=1> phi;          // mean of the Beta distribution
  real<lower=0.1> lam;                 // its concentration a + b (the Pareto prior's support)
}

transformed parameters {
  real<lower=0> a = lam * phi;
  real<lower=0> b = lam * (1 - phi);
}

model {
  vector[n] record_lp;

  phi ~ beta(1, 1);
  lam ~ pareto(0.1, 1.5);

  // each record's Beta(a, b) log-density, clamped to [-M, M], then summed
  record_lp = (a - 1) * log_x + (b - 1) * log_1mx - lbeta(a, b);
  target += sum(fmax(fmin(record_lp, M), -M));
}
