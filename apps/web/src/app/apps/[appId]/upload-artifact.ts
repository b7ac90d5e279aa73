/**
 * Sends a version's artifact to the console's upload route (same handler as the REST PUT) with
 * XMLHttpRequest, the one browser API that reports upload progress. Resolves when the server has
 * stored and hashed it; rejects with the server's message (wrong hash, too large, not allowed).
 */
export function uploadArtifact(
  target: { appId: string; versionId: string },
  file: File,
  onProgress: (sent: number, total: number) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open("PUT", `/apps/${target.appId}/versions/${target.versionId}/artifact`);
    request.setRequestHeader("content-type", "application/octet-stream");
    request.upload.onprogress = (event) =>
      onProgress(event.loaded, event.lengthComputable ? event.total : file.size);
    request.onload = () => {
      if (request.status >= 200 && request.status < 300) return resolve();
      let message = `upload refused (HTTP ${request.status})`;
      try {
        const body = JSON.parse(request.responseText) as { message?: string };
        if (body.message) message = body.message;
      } catch {
        // not JSON: keep the status line
      }
      reject(new Error(message));
    };
    request.onerror = () => reject(new Error("the upload was cut: check the connection and send it again"));
    request.send(file);
  });
}
