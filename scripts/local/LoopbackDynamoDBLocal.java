import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * Starts DynamoDB Local listening on 127.0.0.1 only.
 *
 * DynamoDB Local's jar has no bind-address option (`-help` lists only -port): its
 * DynamoDBProxyServer builds a Jetty `Server(port)`, which listens on every interface. This
 * launcher builds the server exactly as the jar's own main does (same arguments), sets the
 * host of its connector to 127.0.0.1 before starting it, and prints one line once it listens,
 * so the caller knows the port is ours and not another process's. It stops when its standard
 * input closes, so DynamoDB Local never outlives the Node process that started it.
 * Compiled by scripts/local/dynamodb.ts with javac (a JDK); without one, the plain jar runs.
 */
public class LoopbackDynamoDBLocal {
  /** Printed once DynamoDB Local listens, followed by HOST:PORT. */
  public static final String READY = "DynamoDB Local listening on ";

  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    ServerConnector connector = null;
    try {
      Field field = DynamoDBProxyServer.class.getDeclaredField("server");
      field.setAccessible(true);
      Server server = (Server) field.get(proxy);
      for (Connector candidate : server.getConnectors()) {
        connector = (ServerConnector) candidate;
        connector.setHost("127.0.0.1");
      }
    } catch (ReflectiveOperationException | ClassCastException | LinkageError error) {
      // A DynamoDB Local built differently: run it as is, and say so.
      System.err.println("WARNING: could not restrict DynamoDB Local to 127.0.0.1 (" + error + ").");
      connector = null;
    }
    proxy.start();
    String host = connector != null && connector.getHost() != null ? connector.getHost() : "0.0.0.0";
    String port = connector != null ? String.valueOf(connector.getLocalPort()) : "?";
    System.out.println(READY + host + ":" + port);
    System.out.flush();

    Thread watcher = new Thread(() -> {
      try {
        while (System.in.read() != -1) {
          // keep reading until the parent closes the pipe
        }
      } catch (Exception ignored) {
        // the parent is gone either way
      }
      try {
        proxy.stop();
      } catch (Exception ignored) {
        // exiting anyway
      }
      System.exit(0);
    });
    watcher.setDaemon(true);
    watcher.start();
    proxy.join();
  }
}
