/**
 * Runtime environments on a Kubernetes site: an RTE is the container image the site configured
 * for it (`lrms.kubernetes.runtimeEnvironments`), not a script (the scripts live on the service
 * host, and the pod's image decides what software there is). The job description names RTEs,
 * never an image: the image is looked up here by the RTE's name, so a user cannot pick an
 * arbitrary image, and the name itself never enters the manifest.
 */
export interface RteImage {
  readonly image: string;
  readonly env: Readonly<Record<string, string>>;
}

export type RteImages = Readonly<Record<string, RteImage>>;

export type RteImageChoice =
  | { readonly ok: true; readonly image?: RteImage }
  | { readonly ok: false; readonly problem: 'no-image' | 'conflict'; readonly names: readonly string[] };

/**
 * The image the named RTEs select: none when no RTE is named; refused when one has no image or
 * two select different images (a job runs in one container). Own properties only: a name such
 * as `constructor` or `__proto__` is no configured RTE.
 */
export function chooseRteImage(images: RteImages, names: readonly string[]): RteImageChoice {
  let chosen: { name: string; rte: RteImage } | undefined;
  for (const name of names) {
    const rte = Object.hasOwn(images, name) ? images[name] : undefined;
    if (rte === undefined) return { ok: false, problem: 'no-image', names: [name] };
    if (chosen !== undefined && chosen.rte.image !== rte.image)
      return { ok: false, problem: 'conflict', names: [chosen.name, name] };
    chosen ??= { name, rte };
  }
  return chosen === undefined ? { ok: true } : { ok: true, image: mergedEnv(images, names, chosen.rte.image) };
}

/** The image with every named RTE's environment, in the order named (a later one wins). */
function mergedEnv(images: RteImages, names: readonly string[], image: string): RteImage {
  const env: Record<string, string> = {};
  for (const n of names) Object.assign(env, images[n]?.env);
  return { image, env };
}
