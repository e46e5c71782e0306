package dev.maxsim4j.spark;

import com.esotericsoftware.kryo.Kryo;
import dev.maxsim4j.DType;
import org.apache.spark.serializer.KryoRegistrator;

/**
 * Registers with Kryo the classes this module's jobs ship between the driver and the executors (broadcast queries,
 * the scan's plan, each partition's top k), so that jobs run with {@code spark.kryo.registrationRequired=true}:
 * <pre>
 * .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
 * .config("spark.kryo.registrator", "dev.maxsim4j.spark.MaxSimKryoRegistrator")
 * </pre>
 * Without registration required, Kryo writes these classes' names with them instead and needs none of this.
 */
public final class MaxSimKryoRegistrator implements KryoRegistrator {
  @Override
  public void registerClasses(Kryo kryo) {
    kryo.register(QuerySet.class);
    kryo.register(PackedTokens.class);
    kryo.register(DType.class);
    kryo.register(ScanPairScoring.Plan.class);
    kryo.register(DistributedTopK.PartTop.class);
    kryo.register(DistributedTopK.PartTop[].class);
    // the fields' own types: ids of any column type, per-document query lists, the tokens' arrays
    kryo.register(Object[].class);
    kryo.register(java.util.HashMap.class);
    kryo.register(java.util.LinkedHashMap.class);
    kryo.register(int[].class);
    kryo.register(float[].class);
    kryo.register(short[].class);
    kryo.register(byte[].class);
    kryo.register(boolean[].class);
  }
}
