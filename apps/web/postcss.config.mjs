// Tailwind CSS v4 through PostCSS (Next.js picks this file up for both webpack and Turbopack).
export default {
  plugins: { "@tailwindcss/postcss": {} },
};
