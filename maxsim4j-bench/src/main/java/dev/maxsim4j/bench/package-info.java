package dev.maxsim4j.bench;
