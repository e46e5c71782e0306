/** Lucene integration: rescore late-interaction hits with fused MaxSim calls (a block of hits per call). */
module dev.maxsim4j.lucene {
  // both appear in this module's API: MaxSimRescorer takes a MaxSim and is a Lucene Rescorer
  requires transitive dev.maxsim4j;
  requires transitive org.apache.lucene.core;

  exports dev.maxsim4j.lucene;
}
